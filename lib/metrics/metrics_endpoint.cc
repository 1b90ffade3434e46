#include "metrics/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/notice.h"
#include "metrics/text_exposition.h"
#if GPUPROBE_HAVE_CIVETWEB
#include "metrics/civetweb_library.h"
#endif

namespace gpuprobe::metrics {
bool parse_listen_address(std::string_view value, std::string* host, int* port) {
  std::string_view port_text = value;
  *host = "127.0.0.1";
  if (!value.empty() && value.front() == '[') {
    const std::size_t close = value.find("]:");
    if (close == std::string_view::npos || close < 2) return false;
    *host = std::string(value.substr(0, close + 1));
    port_text = value.substr(close + 2);
  } else if (const std::size_t colon = value.rfind(':'); colon != std::string_view::npos) {
    const std::string_view address = value.substr(0, colon);
    if (address.empty() || address.find_first_not_of("0123456789.") != std::string_view::npos ||
        std::count(address.begin(), address.end(), '.') != 3) {
      return false;
    }
    *host = std::string(address);
    port_text = value.substr(colon + 1);
  }
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  *port = std::stoi(std::string(port_text));
  return *port <= 65535;
}

namespace {
// Checked before anything else, so a wrong address is the error a user sees on every build.
Status check_address(const std::string& value, std::string* host, int* port) {
  if (parse_listen_address(value, host, port)) return {};
  return Status::Error("metrics=" + value +
                       ": expected PORT, IPV4:PORT or [IPV6]:PORT, e.g. 9400 or 0.0.0.0:9400");
}
}  // namespace

MetricsEndpoint::MetricsEndpoint(std::string value, SessionHooks hooks)
    : value_(std::move(value)), hooks_(std::move(hooks)), metrics_(hooks_.ranges) {
  metrics_.set_hooks(hooks_);
}

MetricsEndpoint::~MetricsEndpoint() { stop_server(); }

Status MetricsEndpoint::write(const EventBatch& batch) {
  metrics_.add(batch);
  publish();
  return {};
}

Status MetricsEndpoint::close(const Stats& stats, const TimeBase&) {
  metrics_.finish(stats);
  publish();
  stop_server();
  return {};
}

void MetricsEndpoint::publish() {
  std::lock_guard<std::mutex> lock(published_mu_);
  published_ = metrics_.values();  // reuses the copy's nodes: no allocation once names settle
}

#if GPUPROBE_HAVE_CIVETWEB

namespace {

// civetweb's own log lines (a client that went away, a timeout) are not the host's business.
int quiet(const mg_connection*, const char*) { return 1; }

}  // namespace

void MetricsEndpoint::handle_dump(mg_connection* conn) const {
  const CivetwebApi& api = *api_;
  const mg_request_info* request = api.get_request_info(conn);
  // The reason, decoded by civetweb from the query string; at most 200 bytes of it.
  char reason[201] = {};
  const char* query = request->query_string;
  if (query == nullptr ||
      api.get_var(query, std::strlen(query), "reason", reason, sizeof reason) < 0) {
    std::strcpy(reason, "POST /dump");
  }
  const DumpReply reply = hooks_.dump(reason);
  if (reply.http_status != 200) {
    api.send_http_error(conn, reply.http_status, "%s", reply.body.c_str());
    return;
  }
  api.send_http_ok(conn, "text/plain; charset=utf-8", static_cast<long long>(reply.body.size()));
  api.write(conn, reply.body.data(), reply.body.size());
}

// The server's whole behaviour: /metrics for GET and HEAD, /dump for POST when there is a
// flight recorder, nothing else.
int MetricsEndpoint::handle(mg_connection* conn, void* data) {
  const auto* self = static_cast<const MetricsEndpoint*>(data);
  const CivetwebApi& api = *self->api_;
  const mg_request_info* request = api.get_request_info(conn);
  const char* path = request->local_uri != nullptr ? request->local_uri : "";
  if (std::strcmp(path, "/dump") == 0 && self->hooks_.dump) {
    if (std::strcmp(request->request_method, "POST") != 0) {
      api.send_http_error(conn, 405, "%s", "method not allowed: POST /dump\n");
      return 405;
    }
    try {
      self->handle_dump(conn);
      return 200;
    } catch (...) {
      api.send_http_error(conn, 500, "%s", "gpuprobe could not take the dump request\n");
      return 500;
    }
  }
  if (std::strcmp(path, "/metrics") != 0) {
    api.send_http_error(conn, 404, "%s",
                        self->hooks_.dump ? "not found: gpuprobe serves /metrics and /dump\n"
                                          : "not found: gpuprobe serves /metrics only\n");
    return 404;
  }
  const bool head = std::strcmp(request->request_method, "HEAD") == 0;
  if (!head && std::strcmp(request->request_method, "GET") != 0) {
    api.send_http_error(conn, 405, "%s", "method not allowed: GET or HEAD\n");
    return 405;
  }
  // Nothing may leave this function as an exception: it runs on civetweb's thread, in C.
  try {
    MetricValues values;
    {
      std::lock_guard<std::mutex> lock(self->published_mu_);
      values = self->published_;
    }
    const char* accept = api.get_header(conn, "Accept");
    const TextFormat format = TextExposition::negotiate(accept != nullptr ? accept : "");
    const std::string text = values.exposition(format);
    const std::string type(TextExposition(format).content_type());
    api.send_http_ok(conn, type.c_str(), static_cast<long long>(text.size()));
    if (!head) api.write(conn, text.data(), text.size());
    return 200;
  } catch (...) {
    api.send_http_error(conn, 500, "%s", "gpuprobe could not format its metrics\n");
    return 500;
  }
}

Status MetricsEndpoint::open(const TraceInfo& info) {
  metrics_.set_rank(info.rank);
  std::string host;
  int port = 0;
  if (Status s = check_address(value_, &host, &port); !s.ok()) return s;
  if (Status s = load_civetweb(&api_); !s.ok()) return s;
  host_ = host;
  publish();  // a scrape right after start gets the families, empty
  const std::string listen = host + ":" + std::to_string(port);
  const char* options[] = {"listening_ports", listen.c_str(), "num_threads", "2",
                           "connection_queue", "8", "listen_backlog", "8", "max_request_size",
                           "8192",
                           // A connection that never finishes its request holds one of the two
                           // threads this long: 8 left half-open delay a scrape by 4 s, within
                           // Prometheus's 10 s scrape timeout (at 5 s, 20 s: every scrape lost).
                           "request_timeout_ms", "1000", "enable_keep_alive", "no", nullptr};
  mg_callbacks callbacks{};
  callbacks.log_message = &quiet;
  server_ = api_->start(&callbacks, nullptr, options);
  if (server_ == nullptr) {
    return Status::Error("metrics=" + value_ + ": cannot listen on " + listen +
                         " (port in use, or not an address of this machine)");
  }
  // Requests reach this object until stop_server(), which waits for them to finish.
  api_->set_request_handler(server_, "/", &MetricsEndpoint::handle, this);
  mg_server_port ports[1] = {};
  port_ = api_->get_server_ports(server_, 1, ports) >= 1 ? ports[0].port : port;
  base::print_notice("metrics at http://" + host + ":" + std::to_string(port_) + "/metrics");
  return {};
}

namespace {
// Where to connect to reach a server listening on `host` ("127.0.0.1", "0.0.0.0", "[::1]"):
// loopback stands for every interface. False when `host` is no address.
bool connect_address(const std::string& host, int port, sockaddr_storage* address,
                     socklen_t* size) {
  const bool v6 = !host.empty() && host.front() == '[';
  std::string ip = v6 ? host.substr(1, host.size() - 2) : host;
  if (ip == "0.0.0.0") ip = "127.0.0.1";
  if (ip == "::") ip = "::1";
  *address = {};
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

// Opens a connection to the server's listening socket and lets it go. civetweb 1.15 sees
// mg_stop()'s flag only between polls of that socket, which wait up to 2 s for a connection: a
// session's stop would hold the program that long. Non-blocking and bounded to 100 ms, so that an
// accept queue filled by other clients costs the stop nothing more than before.
void knock(const sockaddr_storage& address, socklen_t size) noexcept {
  const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), size) != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    (void)poll(&p, 1, 100);  // the handshake done: the connection waits in the accept queue
  }
  ::close(fd);
}
}  // namespace

void MetricsEndpoint::stop_server() noexcept {
  if (server_ == nullptr) return;
  // While mg_stop() waits for the server's threads, connections end the accept loop's wait.
  std::atomic<bool> stopped{false};
  std::thread waker;
  sockaddr_storage address;
  socklen_t size = 0;
  if (connect_address(host_, port_, &address, &size)) {
    try {
      waker = std::thread([&address, size, &stopped] {
        // After mg_stop() has raised its flag (at once): a connection before it is served.
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        while (!stopped.load(std::memory_order_acquire)) {
          knock(address, size);
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      });
    } catch (...) {  // no thread to spare: the stop takes up to 2 s, as civetweb alone has it
    }
  }
  api_->stop(server_);  // returns once its threads, and any request they serve, have finished
  stopped.store(true, std::memory_order_release);
  if (waker.joinable()) waker.join();
  server_ = nullptr;
}

#else  // no civetweb.h at build time

Status MetricsEndpoint::open(const TraceInfo&) {
  std::string host;
  int port = 0;
  if (Status s = check_address(value_, &host, &port); !s.ok()) return s;
  return Status::Error("metrics=" + value_ +
                       ": this build has no HTTP server (civetweb.h was not found when gpuprobe "
                       "was built; Debian: libcivetweb-dev)");
}

void MetricsEndpoint::stop_server() noexcept {}

#endif

}  // namespace gpuprobe::metrics
