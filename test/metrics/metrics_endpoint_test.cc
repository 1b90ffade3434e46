// `metrics=`: the HTTP endpoint Prometheus scrapes — what it serves, what it refuses, where it
// listens — through a plain socket client, and its body checked by promtool when installed.
#include "metrics/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::metrics {
namespace {

// Sends `request` to 127.0.0.1:`port` and returns everything the server sends back before it
// closes the connection; empty when no connection could be made.
std::string http_exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0) reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply;
}

std::string get(int port, const std::string& path, const std::string& method = "GET") {
  return http_exchange(port, method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

std::string body_of(const std::string& reply) {
  const std::size_t end = reply.find("\r\n\r\n");
  return end == std::string::npos ? "" : reply.substr(end + 4);
}

// Whether this machine can serve at all: the build found civetweb.h, and libcivetweb1 loads.
// Where not, each test says why and checks nothing else (the GPU machine has no civetweb).
bool can_serve() {
  MetricsEndpoint probe("0");
  const Status s = probe.open(TraceInfo{});
  if (!s.ok()) WARN("skipped: " << s.message());
  return s.ok();
}

constexpr CallSite kRequest{"request", "", "", 0, 0, Category::kApp};
const TimeBase kTime(0, 0, 1.0);

// An endpoint on a port the system picks, with `n` requests of 1 ms each published.
struct Served {
  MetricsEndpoint endpoint{"0"};
  explicit Served(int n) {
    REQUIRE(endpoint.open(TraceInfo{}).ok());
    std::vector<Event> events(n, Event{EventType::kRange, 0, &kRequest, 0, 1'000'000, 0.0});
    std::vector<ThreadInfo> threads(1);
    threads[0].os_tid = 4242;
    std::this_thread::sleep_for(std::chrono::milliseconds(120));  // past the publish period
    REQUIRE(endpoint.write(EventBatch{events.data(), events.size(), &kTime, &threads}).ok());
  }
};

TEST_CASE("GET /metrics serves the text format that promtool accepts") {
  if (!can_serve()) return;
  Served s(5);
  REQUIRE(s.endpoint.port() > 0);
  const std::string reply = get(s.endpoint.port(), "/metrics");
  CAPTURE(reply);
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(reply.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") !=
        std::string::npos);
  const std::string body = body_of(reply);
  CHECK(body.find("gpuprobe_range_duration_seconds_count{name=\"request\"} 5\n") !=
        std::string::npos);
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    WARN("skipped: promtool not installed (Debian package prometheus)");
  } else {
    const std::string path = "/tmp/gpuprobe_endpoint_test_" + std::to_string(getpid()) + ".txt";
    std::ofstream(path) << body;
    CHECK(std::system(("promtool check metrics < " + path + " > /dev/null").c_str()) == 0);
    std::remove(path.c_str());
  }
  // A scraper that asks for OpenMetrics gets it, with the latest range of a bucket as its
  // exemplar and the end marker.
  const std::string open_metrics = http_exchange(
      s.endpoint.port(),
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: application/openmetrics-text;"
      "version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n\r\n");
  CAPTURE(open_metrics);
  CHECK(open_metrics.find("Content-Type: application/openmetrics-text; version=1.0.0; "
                          "charset=utf-8\r\n") != std::string::npos);
  CHECK(open_metrics.find("# TYPE gpuprobe_events counter\n") != std::string::npos);
  CHECK(open_metrics.find("gpuprobe_range_duration_seconds_bucket{name=\"request\",le=\"0.001\"} 5 "
                          "# {tid=\"") != std::string::npos);
  CHECK(open_metrics.size() > 6);
  CHECK(open_metrics.substr(open_metrics.size() - 6) == "# EOF\n");
  // HEAD: the same headers, no body.
  const std::string head = get(s.endpoint.port(), "/metrics", "HEAD");
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(body_of(head).empty());
}

TEST_CASE("only /metrics is served, only to GET and HEAD, and requests are bounded") {
  if (!can_serve()) return;
  Served s(1);
  const int port = s.endpoint.port();
  CHECK(get(port, "/").rfind("HTTP/1.1 404", 0) == 0);
  CHECK(get(port, "/metrics/../etc/passwd").rfind("HTTP/1.1 404", 0) == 0);
  CHECK(get(port, "/metrics", "POST").rfind("HTTP/1.1 405", 0) == 0);
  CHECK(get(port, "/metrics", "DELETE").rfind("HTTP/1.1 405", 0) == 0);
  // A request over the 8 KiB limit gets no metrics.
  const std::string huge =
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + std::string(16384, 'a') + "\r\n\r\n";
  const std::string refused = http_exchange(port, huge);
  CAPTURE(refused.substr(0, 200));
  CHECK(refused.find("gpuprobe_range_duration_seconds") == std::string::npos);
  // Still serving after all that.
  CHECK(get(port, "/metrics").rfind("HTTP/1.1 200", 0) == 0);
}

TEST_CASE("connections left half-open delay a scrape by at most a few seconds, never lose it") {
  if (!can_serve()) return;
  Served s(1);
  const int port = s.endpoint.port();
  std::vector<int> half_open;
  for (int i = 0; i < 8; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const std::string start = "GET /metrics HTTP/1.1\r\nHost: x\r\n";  // never finished
    REQUIRE(send(fd, start.data(), start.size(), MSG_NOSIGNAL) > 0);
    half_open.push_back(fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string reply = get(port, "/metrics");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int fd : half_open) ::close(fd);
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(waited < 8.0);  // 8 connections x 1 s request timeout / 2 threads = 4 s, and margin
}

TEST_CASE("POST /dump reaches the flight recorder's hook, with the decoded reason") {
  if (!can_serve()) return;
  std::vector<std::string> reasons;
  SessionHooks hooks;
  hooks.dump = [&reasons](std::string_view reason) {
    reasons.emplace_back(reason);
    if (reasons.size() > 1) return DumpReply{429, "no dump: dump_max_per_hour=1 reached\n"};
    return DumpReply{200, "/dumps/gpuprobe_dump_x\n"};
  };
  hooks.figures = [] {
    FlightFigures f;
    f.enabled = true;
    f.dumps_written = 2;
    return f;
  };
  MetricsEndpoint endpoint("0", hooks);
  REQUIRE(endpoint.open(TraceInfo{}).ok());
  const std::vector<ThreadInfo> threads(1);
  const Event e{EventType::kRange, 0, &kRequest, 0, 1'000'000, 0.0};
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  REQUIRE(endpoint.write(EventBatch{&e, 1, &kTime, &threads}).ok());
  const int port = endpoint.port();
  const std::string accepted = get(port, "/dump?reason=p99%20too%20high");
  CHECK(accepted.rfind("HTTP/1.1 405", 0) == 0);  // GET: not a way to ask
  const std::string ok = get(port, "/dump?reason=p99%20too%20high", "POST");
  CHECK(ok.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(body_of(ok) == "/dumps/gpuprobe_dump_x\n");
  const std::string limited = get(port, "/dump", "POST");
  CHECK(limited.rfind("HTTP/1.1 429", 0) == 0);
  CHECK(limited.find("dump_max_per_hour=1") != std::string::npos);
  REQUIRE(reasons.size() == 2);
  CHECK(reasons[0] == "p99 too high");
  CHECK(reasons[1] == "POST /dump");
  CHECK(body_of(get(port, "/metrics")).find("gpuprobe_dumps_written_total 2\n") !=
        std::string::npos);
  REQUIRE(endpoint.close(Stats{}, kTime).ok());
}

TEST_CASE("the server stops with the session, and a port in use is one clear error") {
  if (!can_serve()) return;
  int port = 0;
  {
    Served s(1);
    port = s.endpoint.port();
    MetricsEndpoint second(std::to_string(port));
    const Status taken = second.open(TraceInfo{});
    REQUIRE_FALSE(taken.ok());
    CHECK(taken.message().find("cannot listen on 127.0.0.1:" + std::to_string(port)) !=
          std::string::npos);
    REQUIRE(s.endpoint.close(Stats{}, kTime).ok());
  }
  CHECK(get(port, "/metrics").empty());  // nothing listens any more
}

// civetweb 1.15's accept loop polls its socket for up to 2 s between looks at mg_stop()'s flag;
// a session's stop (the program's exit, often) must not wait that long.
TEST_CASE("a stop ends the server at once, whatever address it listens on") {
  if (!can_serve()) return;
  for (const char* address : {"127.0.0.1:0", "0.0.0.0:0", "[::1]:0"}) {
    CAPTURE(address);
    MetricsEndpoint endpoint(address);
    if (const Status s = endpoint.open(TraceInfo{}); !s.ok()) {
      WARN("skipped " << address << ": " << s.message());  // no IPv6 on this machine
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(endpoint.close(Stats{}, kTime).ok());
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took < std::chrono::milliseconds(500));
  }
}

TEST_CASE("listen addresses: a port, IPv4:port or [IPv6]:port; loopback unless told") {
  std::string host;
  int port = 0;
  REQUIRE(parse_listen_address("9400", &host, &port));
  CHECK(host == "127.0.0.1");
  CHECK(port == 9400);
  REQUIRE(parse_listen_address("0.0.0.0:9401", &host, &port));
  CHECK(host == "0.0.0.0");
  CHECK(port == 9401);
  REQUIRE(parse_listen_address("[::1]:9402", &host, &port));
  CHECK(host == "[::1]");
  CHECK(port == 9402);
  for (const char* bad : {"", "abc", "localhost:9400", "1.2.3:9400", "99999", "9400:", ":9400",
                          "[::1]", "[]:80", "123456"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_listen_address(bad, &host, &port));
  }
  MetricsEndpoint bad("localhost:9400");
  const Status s = bad.open(TraceInfo{});
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("expected PORT, IPV4:PORT or [IPV6]:PORT") != std::string::npos);
}

}  // namespace
}  // namespace gpuprobe::metrics
