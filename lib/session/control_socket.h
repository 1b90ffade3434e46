// The control socket: where a process's gpuprobe session listens for `gpuprobe capture PID`, and
// the few size-limited lines said on it. Both ends are here, so that they agree.
//
// Where: a UNIX socket named PID.sock in a directory of the user's alone (mode 0700, checked on
// the opened descriptor, never through a link: base/private_dir.h): GPUPROBE_CONTROL_DIR when set,
// else the first of $XDG_RUNTIME_DIR/gpuprobe, /run/user/UID/gpuprobe and /tmp/gpuprobe-UID that
// can be made (a client looks in each). Nothing listens on the network. The
// server answers only a peer of its own uid or root (SO_PEERCRED).
//
// Lines (each at most kMaxControlLine bytes, '\n'-terminated):
//   request   capture SECONDS OUTPUTS     OUTPUTS: trace outputs, "chrome=/abs/w.json[,...]"
//   replies   started PATHS               the window is recording
//             ok PATHS                    it is written: PATHS are the files, comma-separated
//             busy MESSAGE | error MESSAGE
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::session {

// The longest request or reply line, newline included.
inline constexpr std::size_t kMaxControlLine = 4096;

// The environment variable naming the control directory instead of the default ones.
inline constexpr char kControlDirVariable[] = "GPUPROBE_CONTROL_DIR";

// The directories where a process of `uid` may have its control socket, in the order a server
// tries to make one and a client looks.
std::vector<std::string> control_directories(uid_t uid);

// Whether a peer of uid `peer` may ask a process of uid `own`: the same user, or root.
bool peer_allowed(uid_t peer, uid_t own) noexcept;

// The listening end, in the session's process.
class ControlSocket {
 public:
  ControlSocket() = default;
  ~ControlSocket() { close(); }
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Makes the first control directory that can be made safely and listens on PID.sock in it
  // (a stale socket of that name, left by a dead process of this pid, is replaced; so are the
  // sockets of other dead processes, on which nobody listens). Non-blocking.
  [[nodiscard]] Status listen();
  // The listening descriptor; -1 when not listening.
  int fd() const noexcept { return fd_; }
  // The socket's path, for messages.
  const std::string& path() const noexcept { return path_; }
  // Closes it and removes the socket file, if that name still leads to the socket it made.
  void close() noexcept;
  // fork()'s child: closes the inherited descriptors and leaves the file, the parent's, alone.
  void forget() noexcept;

 private:
  int fd_ = -1;
  int dir_fd_ = -1;
  std::string name_;
  std::string path_;
  unsigned long long dev_ = 0, ino_ = 0;
};

// The requesting end (`gpuprobe capture`): asks process `pid` for a window of `seconds` written
// to `outputs`, waits at most `seconds` + `grace` for it, and gives the files in `*paths`.
// `started` is told when the window begins. The errors are one line each: no such process,
// another user's process, a process without a control socket, busy, and the session's own.
[[nodiscard]] Status request_capture(pid_t pid, double seconds, const std::string& outputs,
                                     std::chrono::seconds grace,
                                     const std::function<void(std::string_view)>& started,
                                     std::string* paths);

}  // namespace gpuprobe::session
