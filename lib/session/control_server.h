// The session's control channel: a thread ("gpuprobe-ctl") that listens on the control socket
// (control_socket.h) and turns each `capture SECONDS OUTPUTS` line into a window
// (capture_window.h), answering when it is written. Built so that it cannot harm its host:
// - one thread, non-blocking sockets and poll(); it never waits for a window (the window's own
//   thread answers the requester when it is written);
// - a peer of another uid (root aside) is answered "error" and closed at once (SO_PEERCRED);
// - at most kMaxPending connections are read at once, each given 2 s for its one line of at most
//   kMaxControlLine bytes; more, or slower, are closed;
// - stop() wakes the thread through an eventfd, joins it, closes every socket and removes the
//   socket file: at once, whatever the clients do;
// - fork()'s child inherits no thread (fork copies only the caller): forget() closes the child's
//   copies of the descriptors and leaves the parent's socket file alone.
#pragma once

#include <memory>
#include <thread>

#include "gpuprobe/status.hpp"
#include "session/control_socket.h"

namespace gpuprobe::session {

class ControlServer {
 public:
  // Connections read at once; more are closed.
  static constexpr int kMaxPending = 4;

  ControlServer() = default;
  ~ControlServer();  // stop()
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Listens and starts the thread; an error says why there is no control socket.
  [[nodiscard]] Status start();
  // The socket's path (empty when not listening).
  const std::string& path() const noexcept { return socket_.path(); }
  // Ends the thread, closes every descriptor and removes the socket file. Idempotent.
  void stop() noexcept;
  // fork()'s child (see above).
  void forget() noexcept;

 private:
  void run();

  ControlSocket socket_;
  int wake_fd_ = -1;
  std::thread thread_;
};

// The running session's control server, for fork()'s child handler; set and cleared by the session.
void set_active_control_server(ControlServer* server) noexcept;

// fork()'s child: forgets the parent's control server (ControlServer::forget()).
void forget_control_in_child() noexcept;

}  // namespace gpuprobe::session
