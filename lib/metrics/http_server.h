// The metrics endpoint's HTTP/1.1 server (metrics_endpoint.h), written for its one job and for
// clients that mean harm. One thread, non-blocking sockets and poll(): a client slow to ask, or
// one that never reads its answer, costs only its own socket, never a worker that a scrape needs.
// - A request is a request line and headers of at most 8 KiB (431 past it), and a body only with
//   a Content-Length that fits the same 8 KiB (413 past it); anything malformed: 400.
// - A connection has 5 s to send its request and 10 s to take its response, then it is closed.
//   One request per connection (Connection: close).
// - At most 64 connections, 16 per peer address. When full, a new connection takes the place of
//   the oldest one still sending its request (else of the oldest one being answered): the peer's
//   own when that peer is at its cap. So clients that hold connections open lose them to the next
//   scrape instead of keeping it out.
// - A response is one immutable shared buffer (HttpResponse) that any number of connections send
//   from: a slow reader keeps a reference, not a copy.
// - stop() wakes the thread through an eventfd and returns once every socket is closed, at once,
//   whatever the clients do; connections not fully answered are reset.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::metrics {

// A complete request, valid while the handler runs.
struct HttpRequest {
  std::string_view method;  // as sent: "GET", "HEAD", "POST", ...
  std::string_view path;    // the target before '?'
  std::string_view query;   // the target after '?', not decoded; empty when none
  std::string_view accept;  // the Accept header; empty when none
};

// A whole response, status line to body, shared by every connection that sends it.
struct HttpResponse {
  std::shared_ptr<const std::string> bytes;
  std::size_t header_bytes = 0;  // the status line and headers: all that HEAD sends

  // A response with Content-Type, Content-Length and Connection: close.
  static HttpResponse make(int status, std::string_view content_type, std::string_view body);
};

// The bounds of HttpServer (see above); tests may tighten them.
struct HttpLimits {
  std::size_t max_connections = 64;
  std::size_t max_per_peer = 16;
  std::size_t max_request_bytes = 8192;
  std::chrono::milliseconds request_deadline{5000};
  std::chrono::milliseconds response_deadline{10000};
};

// `host` ("127.0.0.1", "0.0.0.0", "[::1]") as a socket address with `port`; false when it is
// none. `for_connect`: 0.0.0.0 and [::] become loopback, where a client reaches such a server.
bool socket_address(const std::string& host, int port, bool for_connect, sockaddr_storage* address,
                    socklen_t* size);

class HttpServer {
 public:
  // Called on the server's thread for each complete request; what it returns is sent. An
  // exception is answered 500.
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpServer();
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on `host` and `port` (0: one the system picks) and serves on a thread of its own,
  // "gpuprobe-http". An error says why it cannot (no such address, port in use).
  Status start(const std::string& host, int port, Handler handler, HttpLimits limits = {});
  // The port it listens on; 0 before start().
  int port() const noexcept { return port_; }
  // Ends the thread and closes every socket it holds; nothing is left behind. Idempotent.
  void stop() noexcept;

 private:
  struct Connection;
  void run() noexcept;
  void accept_new(std::chrono::steady_clock::time_point now);
  bool read_request(Connection& c, std::chrono::steady_clock::time_point now);
  void answer(Connection& c, HttpResponse response, bool head,
              std::chrono::steady_clock::time_point now);
  bool write_response(Connection& c);
  void close_at(std::size_t i, bool reset) noexcept;

  Handler handler_;
  HttpLimits limits_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::vector<Connection> connections_;  // the server's thread only
  std::chrono::steady_clock::time_point accept_resume_{};
};

}  // namespace gpuprobe::metrics
