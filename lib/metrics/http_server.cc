#include "metrics/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace gpuprobe::metrics {

using Clock = std::chrono::steady_clock;

struct HttpServer::Connection {
  int fd = -1;
  std::string peer;  // the peer's address, without its port
  bool answering = false;
  Clock::time_point since;                     // accepted, or answering since
  Clock::time_point deadline;                  // closed past this
  std::string in;                              // the request so far
  std::size_t header_end = std::string::npos;  // where in `in` its headers end, once they have
  HttpResponse response;
  std::size_t sent = 0;
  std::size_t end = 0;  // of response.bytes to send
};

namespace {

const char* status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    default:
      return "Error";
  }
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HttpResponse error(int status, std::string_view body) {
  return HttpResponse::make(status, "text/plain; charset=utf-8", body);
}

// The peer's address without its port; an IPv4 address mapped into IPv6 as the IPv4 one.
std::string peer_key(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(peer).sin_addr;
    return std::string(reinterpret_cast<const char*>(&a), sizeof a);
  }
  if (peer.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) return std::string(reinterpret_cast<const char*>(&a) + 12, 4);
    return std::string(reinterpret_cast<const char*>(&a), sizeof a);
  }
  return {};
}

// Discards what the client sent beyond its request, so that the close that follows sends the
// end of the response, not a reset that may cut it off. Bounded: a client that keeps sending is
// reset.
void drain(int fd) {
  char buf[4096];
  for (int i = 0; i < 16; ++i) {
    if (recv(fd, buf, sizeof buf, MSG_DONTWAIT) <= 0) return;
  }
}

}  // namespace

HttpResponse HttpResponse::make(int status, std::string_view content_type, std::string_view body) {
  auto bytes = std::make_shared<std::string>();
  bytes->reserve(160 + body.size());
  *bytes += "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) + "\r\n";
  *bytes += "Content-Type: ";
  *bytes += content_type;
  *bytes += "\r\nContent-Length: " + std::to_string(body.size());
  *bytes += "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  HttpResponse r;
  r.header_bytes = bytes->size();
  *bytes += body;
  r.bytes = std::move(bytes);
  return r;
}

bool socket_address(const std::string& host, int port, bool for_connect, sockaddr_storage* address,
                    socklen_t* size) {
  const bool v6 = host.size() > 2 && host.front() == '[' && host.back() == ']';
  std::string ip = v6 ? host.substr(1, host.size() - 2) : host;
  if (for_connect && ip == "0.0.0.0") ip = "127.0.0.1";
  if (for_connect && ip == "::") ip = "::1";
  *address = {};
  if (port < 0 || port > 65535) return false;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(address);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<std::uint16_t>(port));
    *size = sizeof(*a);
    return inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr) == 1;
  }
  auto* a = reinterpret_cast<sockaddr_in*>(address);
  a->sin_family = AF_INET;
  a->sin_port = htons(static_cast<std::uint16_t>(port));
  *size = sizeof(*a);
  return inet_pton(AF_INET, ip.c_str(), &a->sin_addr) == 1;
}

HttpServer::HttpServer() = default;

HttpServer::~HttpServer() { stop(); }

Status HttpServer::start(const std::string& host, int port, Handler handler, HttpLimits limits) {
  stop();
  sockaddr_storage address;
  socklen_t size = 0;
  if (!socket_address(host, port, false, &address, &size)) {
    return Status::Error("not an address of this machine: " + host);
  }
  handler_ = std::move(handler);
  limits_ = limits;
  const auto fail = [this](const char* what) {
    const std::string message = std::string(what) + ": " + std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    listen_fd_ = wake_fd_ = -1;
    return Status::Error(message);
  };
  listen_fd_ = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return fail("socket");
  const int one = 1;
  (void)setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.ss_family == AF_INET6) {
    (void)setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  }
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), size) != 0) {
    return fail("bind");
  }
  if (listen(listen_fd_, 64) != 0) return fail("listen");
  sockaddr_storage bound;
  socklen_t bound_size = sizeof bound;
  if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_size) != 0) {
    return fail("getsockname");
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return fail("eventfd");
  // The program's signals go to its own threads: the server's starts with all of them blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "gpuprobe-http");
      run();
    });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = EAGAIN;
    return fail("no thread");
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  return {};
}

void HttpServer::stop() noexcept {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    while (write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
    try {
      thread_.join();
    } catch (...) {  // cannot be joinable and fail here; nothing to do if it did
    }
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
  handler_ = nullptr;
}

void HttpServer::close_at(std::size_t i, bool reset) noexcept {
  Connection& c = connections_[i];
  if (reset) {
    // Not answered in full: a reset, so the system keeps no unsent data for it either.
    const linger abort{1, 0};
    (void)setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  } else {
    drain(c.fd);
  }
  ::close(c.fd);
  if (i + 1 != connections_.size()) connections_[i] = std::move(connections_.back());
  connections_.pop_back();
}

void HttpServer::run() noexcept {
  std::vector<pollfd> fds;
  try {
    connections_.reserve(limits_.max_connections + 1);
    fds.reserve(limits_.max_connections + 2);
  } catch (...) {
    return;
  }
  for (;;) {
    Clock::time_point now = Clock::now();
    const bool accepting = now >= accept_resume_;
    Clock::time_point next = now + std::chrono::seconds(1);
    if (!accepting) next = std::min(next, accept_resume_);
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, static_cast<short>(accepting ? POLLIN : 0), 0});
    for (const Connection& c : connections_) {
      fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
      next = std::min(next, c.deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
    const int n = poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait + 1, 0)));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;  // stop()
    now = Clock::now();
    // From the back: close_at() moves the last connection, one already looked at, into the gap.
    for (std::size_t i = connections_.size(); i-- > 0;) {
      Connection& c = connections_[i];
      const short ev = n > 0 ? fds[i + 2].revents : 0;
      bool keep = true;
      bool reset = true;
      if ((ev & (POLLERR | POLLNVAL)) != 0) {
        keep = false;
      } else if (!c.answering && (ev & (POLLIN | POLLHUP)) != 0) {
        keep = read_request(c, now);
      } else if (c.answering && (ev & (POLLOUT | POLLHUP)) != 0) {
        keep = write_response(c);
      }
      if (!keep && c.answering && c.sent == c.end) reset = false;  // answered in full
      if (keep && now >= c.deadline) keep = false;
      if (!keep) close_at(i, reset);
    }
    if (accepting && n > 0 && (fds[1].revents & POLLIN) != 0) accept_new(now);
  }
  while (!connections_.empty()) close_at(connections_.size() - 1, true);
  connections_.shrink_to_fit();
}

void HttpServer::accept_new(Clock::time_point now) {
  for (int k = 0; k < 64; ++k) {
    sockaddr_storage peer;
    socklen_t size = sizeof peer;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &size,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors or memory: the program's need comes first; look again in 100 ms.
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        accept_resume_ = now + std::chrono::milliseconds(100);
      return;
    }
    Connection c;
    c.fd = fd;
    c.since = now;
    c.deadline = now + limits_.request_deadline;
    try {
      c.peer = peer_key(peer);
    } catch (...) {
      ::close(fd);
      return;
    }
    // Full, for this peer or in all: the new connection takes the place of the oldest one still
    // sending its request, else of the oldest one being answered.
    for (const bool per_peer : {true, false}) {
      std::size_t count = 0;
      std::size_t oldest = connections_.size();
      for (std::size_t i = 0; i < connections_.size(); ++i) {
        const Connection& o = connections_[i];
        if (per_peer && o.peer != c.peer) continue;
        ++count;
        if (oldest == connections_.size()) {
          oldest = i;
          continue;
        }
        const Connection& best = connections_[oldest];
        if (o.answering != best.answering ? !o.answering : o.since < best.since) oldest = i;
      }
      const std::size_t cap = per_peer ? limits_.max_per_peer : limits_.max_connections;
      if (count >= cap && oldest < connections_.size()) close_at(oldest, true);
    }
    connections_.push_back(std::move(c));  // room reserved: max_connections + 1
  }
}

bool HttpServer::read_request(Connection& c, Clock::time_point now) {
  char buf[4096];
  for (;;) {
    const ssize_t got = recv(c.fd, buf, sizeof buf, 0);
    if (got == 0) return false;  // gone before its request was complete
    if (got < 0) return errno == EINTR ? true : (errno == EAGAIN || errno == EWOULDBLOCK);
    const std::size_t from = c.in.size() > 3 ? c.in.size() - 3 : 0;
    c.in.append(buf, static_cast<std::size_t>(got));
    if (c.header_end == std::string::npos) c.header_end = c.in.find("\r\n\r\n", from);
    const std::size_t header_end = c.header_end;
    if (header_end == std::string::npos) {
      if (c.in.size() > limits_.max_request_bytes) {
        answer(c, error(431, "request too large: at most 8 KiB of request line and headers\n"),
               false, now);
        return write_response(c);
      }
      continue;
    }
    const std::string_view head(c.in.data(), header_end + 2);
    // The request line: METHOD TARGET HTTP/1.x
    const std::size_t line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || sp1 == 0 || line.find(' ', sp2 + 1) != line.npos ||
        line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0 || line[sp1 + 1] != '/') {
      answer(c, error(400, "bad request\n"), false, now);
      return write_response(c);
    }
    HttpRequest request;
    request.method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::size_t question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string_view::npos) request.query = target.substr(question + 1);
    std::size_t body = 0;
    bool bad = false;
    for (std::size_t at = line_end + 2; at < head.size();) {
      const std::size_t eol = head.find("\r\n", at);
      const std::string_view field = head.substr(at, eol - at);
      at = eol + 2;
      const std::size_t colon = field.find(':');
      if (colon == std::string_view::npos || colon == 0) {
        bad = true;
        break;
      }
      const std::string_view name = field.substr(0, colon);
      const std::string_view value = trim(field.substr(colon + 1));
      if (iequals(name, "Accept")) {
        request.accept = value;
      } else if (iequals(name, "Content-Length")) {
        if (value.empty() || value.size() > 9 ||
            value.find_first_not_of("0123456789") != std::string_view::npos) {
          bad = true;
          break;
        }
        body = static_cast<std::size_t>(std::stoul(std::string(value)));
      } else if (iequals(name, "Transfer-Encoding")) {
        bad = true;  // no chunked bodies: nothing here takes one
        break;
      }
    }
    if (bad) {
      answer(c, error(400, "bad request\n"), false, now);
      return write_response(c);
    }
    if (header_end + 4 + body > limits_.max_request_bytes) {
      answer(c, error(413, "request body too large\n"), false, now);
      return write_response(c);
    }
    if (c.in.size() < header_end + 4 + body) continue;  // the body is on its way
    HttpResponse response;
    try {
      response = handler_(request);
    } catch (...) {
      response = error(500, "gpuprobe could not answer\n");
    }
    answer(c, std::move(response), request.method == "HEAD", now);
    return write_response(c);
  }
}

void HttpServer::answer(Connection& c, HttpResponse response, bool head, Clock::time_point now) {
  c.answering = true;
  c.since = now;
  c.deadline = now + limits_.response_deadline;
  c.response = std::move(response);
  c.sent = 0;
  c.end = c.response.bytes ? (head ? c.response.header_bytes : c.response.bytes->size()) : 0;
  std::string().swap(c.in);
}

bool HttpServer::write_response(Connection& c) {
  const char* data = c.response.bytes ? c.response.bytes->data() : nullptr;
  while (c.sent < c.end) {
    const ssize_t n = send(c.fd, data + c.sent, c.end - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.sent += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }
  return false;  // all sent: closed (not reset)
}

}  // namespace gpuprobe::metrics
