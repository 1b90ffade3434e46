// A program with ranges and no Session: it is traced only when the GPUPROBE environment
// variable names an output, e.g.
//
//   GPUPROBE=chrome=env_trace.json ./env_traced
#include <gpuprobe/gpuprobe.hpp>

#include <cstdio>
#include <thread>

namespace {

int fib(int n) {
  GPUPROBE_FUNCTION();
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

}  // namespace

int main() {
  GPUPROBE_RANGE("main");
  std::thread worker([] { std::printf("fib(12) = %d\n", fib(12)); });
  worker.join();
  GPUPROBE_INSTANT("done");
  return 0;
}
