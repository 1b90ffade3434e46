// fork() while a session listens on its control socket: the child inherits no listening thread
// and none of its descriptors (closed by the fork handler), never removes the parent's socket
// file, may listen on a socket of its own, and the parent still answers `gpuprobe capture`
// afterwards. (Plain build only, as fork_test: the sanitizers do not support fork() with
// threads running.)
#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gpuprobe/gpuprobe.hpp"
#include "session/control_socket.h"
#include "support/catch.hpp"

namespace fs = std::filesystem;

namespace {

// The number of listening UNIX sockets among this process's descriptors.
int listening_sockets() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (const dirent* e = readdir(d)) {
    const int fd = std::atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == dirfd(d)) continue;
    int listening = 0;
    socklen_t size = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening) ++n;
  }
  closedir(d);
  return n;
}

}  // namespace

TEST_CASE("a forked child inherits no control socket, and the parent's stays and answers") {
  const fs::path root = fs::temp_directory_path() / ("capture_fork_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  setenv(gpuprobe::session::kControlDirVariable, (root / "ctl").c_str(), 1);
  gpuprobe::Session session("flush_ms=5");
  REQUIRE(session.ok());
  const fs::path mine = root / "ctl" / (std::to_string(getpid()) + ".sock");
  REQUIRE(fs::exists(fs::symlink_status(mine)));
  REQUIRE(listening_sockets() == 1);

  const pid_t child = fork();
  if (child == 0) {
    alarm(60);  // a hang is a failed child
    int code = listening_sockets() == 0 ? 0 : 10;
    {
      gpuprobe::Session own("flush_ms=5");
      const fs::path child_socket = root / "ctl" / (std::to_string(getpid()) + ".sock");
      if (!own.ok() || !fs::exists(fs::symlink_status(child_socket))) code = 11;
      GPUPROBE_RANGE("child");
      if (!own.stop().ok() || fs::exists(fs::symlink_status(child_socket))) code = 12;
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(fs::exists(fs::symlink_status(mine)));
  const fs::path out = root / "after_fork.json";
  std::string paths;
  const gpuprobe::Status s = gpuprobe::session::request_capture(
      getpid(), 0.05, "chrome=" + out.string(), std::chrono::seconds(60), nullptr, &paths);
  CHECK(s.ok());
  CHECK(fs::exists(out));
  REQUIRE(session.stop().ok());
  unsetenv(gpuprobe::session::kControlDirVariable);
  fs::remove_all(root);
}
