// A program traced only through GPUPROBE, for the tests of what happens to its trace when it is
// stopped by a signal or starts processes of its own.
//   signal_target wait    records, says "ready", and goes on recording until a signal ends it
//   signal_target family  records, runs `signal_target leaf` (which inherits GPUPROBE), exits
//   signal_target leaf    records and exits
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <gpuprobe/gpuprobe.hpp>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "wait";
  if (std::strcmp(mode, "leaf") == 0) {
    GPUPROBE_RANGE("leaf");
    return 0;
  }
  if (std::strcmp(mode, "family") == 0) {
    { GPUPROBE_RANGE("root"); }
    const pid_t child = fork();
    if (child == 0) {
      execl("/proc/self/exe", argv[0], "leaf", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  { GPUPROBE_RANGE("before ready"); }
  std::printf("ready\n");
  std::fflush(stdout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    GPUPROBE_RANGE("loop");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return 3;  // no signal came
}
