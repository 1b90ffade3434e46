#include "session/control_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "session/capture_window.h"

namespace gpuprobe::session {
namespace {

constexpr std::chrono::milliseconds kRequestDeadline{2000};

// One reply line, sent without waiting: a connection that does not take it loses it.
void send_line(int fd, const std::string& word, const std::string& text) {
  std::string line = word + " " + text;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (line.size() > kMaxControlLine - 1) line.resize(kMaxControlLine - 1);
  line += '\n';
  static_cast<void>(::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT));
}

// Answers one request line on `fd`; the descriptor is closed here, or by the window when done.
void handle(int fd, const std::string& line) {
  const std::string verb = line.substr(0, line.find(' '));
  if (verb != "capture") {
    send_line(fd, "error", "unknown request (this process speaks: capture SECONDS OUTPUTS)");
    ::close(fd);
    return;
  }
  const std::size_t a = line.find(' ');
  const std::size_t b = a == std::string::npos ? std::string::npos : line.find(' ', a + 1);
  WindowRequest request;
  std::string why;
  if (b == std::string::npos ||
      !parse_window_seconds(line.substr(a + 1, b - a - 1), &request.seconds, &why)) {
    send_line(fd, "error", why.empty() ? "expected: capture SECONDS OUTPUTS" : why);
    ::close(fd);
    return;
  }
  request.outputs = line.substr(b + 1);
  bool busy = false;
  const Status s = request_window(
      request, [fd](const std::string& paths) { send_line(fd, "started", paths); },
      [fd](const Status& status, const std::string& paths) {
        if (status.ok()) {
          send_line(fd, "ok", paths);
        } else {
          send_line(fd, "error", status.message());
        }
        ::close(fd);
      },
      &busy);
  if (!s.ok()) {
    send_line(fd, busy ? "busy" : "error", s.message());
    ::close(fd);
  }
}

std::atomic<ControlServer*> g_server{nullptr};

}  // namespace

ControlServer::~ControlServer() { stop(); }

Status ControlServer::start() {
  if (Status s = socket_.listen(); !s.ok()) return s;
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    socket_.close();
    return Status::Error("control socket: no eventfd");
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "gpuprobe-ctl");
      run();
    });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(wake_fd_);
    wake_fd_ = -1;
    socket_.close();
    return Status::Error("control socket: cannot start its thread");
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return {};
}

void ControlServer::run() {
  struct Pending {
    int fd;
    std::string line;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<Pending> pending;
  std::vector<pollfd> fds;
  // After accept() fails for want of descriptors or memory, the listening socket stays readable:
  // it is left out of poll() for a while instead of spinning.
  std::chrono::steady_clock::time_point paused_until{};
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    const bool paused = now < paused_until;
    fds.assign({pollfd{wake_fd_, POLLIN, 0}, pollfd{paused ? -1 : socket_.fd(), POLLIN, 0}});
    int timeout = paused ? static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                paused_until - now)
                                                .count() +
                                            1)
                         : -1;
    for (const Pending& p : pending) {
      fds.push_back(pollfd{p.fd, POLLIN, 0});
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - now);
      const int ms = static_cast<int>(std::max<std::int64_t>(left.count(), 0) + 1);
      timeout = timeout < 0 ? ms : std::min(timeout, ms);
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;  // closes them
    if (fds[0].revents != 0) break;                                            // stop()
    now = std::chrono::steady_clock::now();
    // Reads first, then expiries, then new connections (their slots are free by then).
    std::vector<Pending> next;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      Pending& p = pending[i];
      bool done = false;
      if (fds[i + 2].revents != 0) {
        char buffer[512];
        const ssize_t n = ::recv(p.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) {
          p.line.append(buffer, static_cast<std::size_t>(n));
          const std::size_t nl = p.line.find('\n');
          if (nl != std::string::npos) {
            handle(p.fd, p.line.substr(0, nl));
            done = true;
          } else if (p.line.size() >= kMaxControlLine) {
            send_line(p.fd, "error", "request line too long");
            ::close(p.fd);
            done = true;
          }
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          ::close(p.fd);
          done = true;
        }
      }
      if (!done && now >= p.deadline) {
        send_line(p.fd, "error", "no request in time");
        ::close(p.fd);
        done = true;
      }
      if (!done) next.push_back(std::move(p));
    }
    pending.swap(next);
    if (fds[1].revents == 0) continue;
    for (;;) {
      const int fd = ::accept4(socket_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          paused_until = now + std::chrono::seconds(1);
        }
        break;
      }
      ucred peer{};
      socklen_t size = sizeof peer;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
          !peer_allowed(peer.uid, geteuid())) {
        send_line(fd, "error", "permission denied: only this process's user (or root) may ask");
        ::close(fd);
        continue;
      }
      if (pending.size() >= static_cast<std::size_t>(kMaxPending)) {
        send_line(fd, "busy", "too many requests at once");
        ::close(fd);
        continue;
      }
      pending.push_back(Pending{fd, {}, now + kRequestDeadline});
    }
  }
  for (const Pending& p : pending) ::close(p.fd);
}

void ControlServer::stop() noexcept {
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    static_cast<void>(::write(wake_fd_, &one, sizeof one));
  }
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
  socket_.close();
}

void ControlServer::forget() noexcept {
  // Not joined, never destroyed: the thread is the parent's.
  new std::thread(std::move(thread_));
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
  socket_.forget();
}

void set_active_control_server(ControlServer* server) noexcept {
  g_server.store(server, std::memory_order_release);
}

void forget_control_in_child() noexcept {
  if (ControlServer* server = g_server.exchange(nullptr, std::memory_order_acq_rel)) {
    server->forget();
  }
}

}  // namespace gpuprobe::session
