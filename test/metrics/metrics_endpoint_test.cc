// `metrics=`: the HTTP endpoint Prometheus scrapes — what it serves, what it refuses, where it
// listens — through a plain socket client, and its body checked by promtool when installed; and
// what hostile local clients do to it (issue 48): connections held half-open, clients that never
// read, many connections from one address, escape sequences in a dump's reason.
#include "metrics/metrics_endpoint.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>

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
  // A bound, not a timing: a server that never answers fails the test instead of hanging it.
  const timeval limit{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
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

// A connection to 127.0.0.1:`port` from the loopback address `from` (127.0.0.X: a peer of its own
// to the server), that has sent `request`; -1 when it could not be made.
int connect_from(int port, const char* from, const std::string& request, int receive_buffer = 0) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, from, &local.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A request that never ends: the connection stays in its request.
const std::string kHalfOpen = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
const std::string kWhole = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

// Whether the server has ended the connection `fd` (closed or reset it), waiting for that up to
// `wait_ms` — a bound for a loaded machine, never what a test asserts on its own. Reads nothing:
// a client that never reads stays one.
bool ended(int fd, int wait_ms) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, wait_ms) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// How many of `fds` the server has not ended, at once.
int still_open(const std::vector<int>& fds) {
  int open = 0;
  for (int fd : fds) open += ended(fd, 0) ? 0 : 1;
  return open;
}

// How many of `fds` the server ends within `total_ms` in all — a bound for a loaded machine.
int ended_within(const std::vector<int>& fds, int total_ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(total_ms);
  int count = 0;
  for (int fd : fds) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    count += ended(fd, static_cast<int>(std::max<long long>(left.count(), 0))) ? 1 : 0;
  }
  return count;
}

void close_all(std::vector<int>* fds) {
  for (int fd : *fds) ::close(fd);
  fds->clear();
}

// The file descriptors this process holds.
int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
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

// Issue 48, item 10: with civetweb's two workers, 16 connections left half-open delayed a scrape
// by 7-8 s and 32 lost it. Here they cost a slot each, and a scrape that finds every slot taken
// displaces the oldest of them; none of the others is closed for it.
TEST_CASE("a scrape is answered at once while 64 connections from 4 addresses sit half-open") {
  Served s(1);
  const int port = s.endpoint.port();
  std::vector<int> held;
  const char* peers[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
  for (int i = 0; i < 64; ++i) {
    const int fd = connect_from(port, peers[i / 16], kHalfOpen);
    REQUIRE(fd >= 0);
    held.push_back(fd);
  }
  const std::string reply = get(port, "/metrics");
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(body_of(reply).find("gpuprobe_range_duration_seconds_count{name=\"request\"} 1\n") !=
        std::string::npos);
  // Answered without waiting for them: the server took the place of the oldest one, and the
  // others still wait for their request's deadline (5 s).
  CHECK(ended(held[0], 10'000));
  const std::vector<int> others(held.begin() + 1, held.end());
  CHECK(still_open(others) >= 56);
  // They do not keep their place: each is closed at its deadline, and the server goes on.
  CHECK(ended_within(others, 30'000) == 63);
  CHECK(get(port, "/metrics").rfind("HTTP/1.1 200", 0) == 0);
  close_all(&held);
}

TEST_CASE("one address holds at most 16 connections: its 17th displaces its own oldest") {
  Served s(1);
  const int port = s.endpoint.port();
  std::vector<int> mine;
  std::vector<int> others;
  for (int i = 0; i < 16; ++i) {
    mine.push_back(connect_from(port, "127.0.0.1", kHalfOpen));
    others.push_back(connect_from(port, "127.0.0.2", kHalfOpen));
    REQUIRE(mine.back() >= 0);
    REQUIRE(others.back() >= 0);
  }
  // Answered in order of arrival: after this, the server has taken every connection above.
  const int sync = connect_from(port, "127.0.0.3", kWhole);
  REQUIRE(sync >= 0);
  CHECK(ended(sync, 60'000));
  ::close(sync);
  CHECK(still_open(mine) == 16);
  // The 17th from 127.0.0.1 is served, in place of that address's oldest connection.
  const std::string reply = get(port, "/metrics");
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(ended(mine[0], 10'000));
  CHECK(still_open(std::vector<int>(mine.begin() + 1, mine.end())) == 15);
  CHECK(still_open(others) == 16);  // another address's connections are not its to displace
  close_all(&mine);
  close_all(&others);
}

// Issue 48, item 10: 16 clients that asked for a large response and never read it held
// civetweb's workers in a blocking write until the scrape timed out. Here they hold a reference
// to the one response built for all, and their socket, until their deadline (10 s).
TEST_CASE("clients that never read an 11 MB response do not hold a scrape back") {
  constexpr int kNames = 4096;
  SessionHooks hooks;
  hooks.ranges.max_names = kNames;
  MetricsEndpoint endpoint("0", hooks);
  REQUIRE(endpoint.open(TraceInfo{}).ok());
  std::deque<std::string> names;
  std::vector<CallSite> sites;
  sites.reserve(kNames);
  std::vector<Event> events;
  for (int i = 0; i < kNames; ++i) {
    names.push_back("request_with_a_long_descriptive_name_" + std::to_string(i));
    sites.push_back(CallSite{names.back().c_str(), "", "", 0, 0, Category::kApp});
  }
  for (const CallSite& site : sites) {
    events.push_back(Event{EventType::kRange, 0, &site, 0, 1'000'000, 0.0});
  }
  std::vector<ThreadInfo> threads(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  REQUIRE(endpoint.write(EventBatch{events.data(), events.size(), &kTime, &threads}).ok());
  const int port = endpoint.port();
  std::vector<int> never_read;
  for (int i = 0; i < 16; ++i) {
    never_read.push_back(connect_from(port, "127.0.0.2", kWhole, 4096));
    REQUIRE(never_read.back() >= 0);
  }
  const std::string reply = get(port, "/metrics");
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(reply.size() > 10'000'000);
  CHECK(reply.find("request_with_a_long_descriptive_name_4095\"") != std::string::npos);
  CHECK(still_open(never_read) >= 12);  // answered while they still hold their responses
  // And they are let go at their deadline, the server still serving.
  CHECK(ended_within(never_read, 60'000) == 16);
  CHECK(get(port, "/metrics", "HEAD").rfind("HTTP/1.1 200", 0) == 0);
  close_all(&never_read);
  REQUIRE(endpoint.close(Stats{}, kTime).ok());
}

// Issue 48, item 9: civetweb kept 9 descriptors per stop while 64 connections were held.
TEST_CASE("a stop closes every connection and leaves no descriptor, whatever clients hold") {
  const int baseline = open_fds();
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    std::vector<int> clients;
    {
      MetricsEndpoint endpoint("0");
      REQUIRE(endpoint.open(TraceInfo{}).ok());
      const int port = endpoint.port();
      const char* peers[] = {"127.0.0.1", "127.0.0.3", "127.0.0.4"};
      for (int i = 0; i < 48; ++i) clients.push_back(connect_from(port, peers[i / 16], kHalfOpen));
      for (int i = 0; i < 16; ++i) {
        clients.push_back(connect_from(port, "127.0.0.2", kWhole, 4096));
      }
      for (int fd : clients) REQUIRE(fd >= 0);
      // Not an assertion: time for the server to take the connections before it stops.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      REQUIRE(endpoint.close(Stats{}, kTime).ok());
      // Every client sees its connection end: none is left to the system or to a leaked socket.
      CHECK(ended_within(clients, 10'000) == 64);
    }
    close_all(&clients);
    CHECK(open_fds() == baseline);
  }
}

TEST_CASE("POST /dump reaches the flight recorder's hook, with the decoded reason") {
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

// Issue 48, item 11: the reason went raw to the host's stderr and into dump.json.
TEST_CASE("POST /dump hands on a reason of printable text and bounded length, whatever is sent") {
  std::vector<std::string> reasons;
  SessionHooks hooks;
  hooks.dump = [&reasons](std::string_view reason) {
    reasons.emplace_back(reason);
    return DumpReply{200, "/dumps/gpuprobe_dump_x\n"};
  };
  MetricsEndpoint endpoint("0", hooks);
  REQUIRE(endpoint.open(TraceInfo{}).ok());
  const int port = endpoint.port();
  // A terminal title, a screen clear, a forged log line, a bell, a NUL, an invalid byte.
  const std::string evil =
      "/dump?reason=%1b%5d0;owned%07%1b%5b2J%0d%0agpuprobe:%20dump%20written:%20/etc/passwd%00%ff"
      "%e2%80%ae";
  CHECK(get(port, evil, "POST").rfind("HTTP/1.1 200", 0) == 0);
  CHECK(get(port, "/dump?reason=" + std::string(5000, 'a'), "POST").rfind("HTTP/1.1 200", 0) == 0);
  REQUIRE(endpoint.close(Stats{}, kTime).ok());
  REQUIRE(reasons.size() == 2);
  for (const std::string& r : reasons) {
    CAPTURE(r);
    CHECK(r.size() <= 200);
    for (unsigned char c : r) CHECK((c >= 0x20 && c != 0x7f));
    CHECK(r.find("\xe2\x80\xae") == std::string::npos);  // RIGHT-TO-LEFT OVERRIDE
  }
  CHECK(reasons[0] ==
        "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0agpuprobe: dump written: /etc/passwd\\x00\\xff\\u202e");
  CHECK(reasons[1].rfind("aaaa", 0) == 0);  // cut, not dropped
}

TEST_CASE("the server stops with the session, and a port in use is one clear error") {
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

// A session's stop (the program's exit, often) must not wait for the server (civetweb 1.15 took
// up to 2 s: its accept loop looked at mg_stop()'s flag between 2 s polls).
TEST_CASE("a stop ends the server at once, whatever address it listens on") {
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

TEST_CASE("POST /capture reaches the session's capture hook with the seconds asked") {
  std::vector<std::string> asked;
  SessionHooks hooks;
  hooks.capture = [&asked](std::string_view seconds) {
    asked.emplace_back(seconds);
    if (asked.size() > 1) return CaptureReply{409, "a window is being recorded already\n"};
    return CaptureReply{202, "/work/gpuprobe_capture_x.json\n"};
  };
  MetricsEndpoint endpoint("0", hooks);
  REQUIRE(endpoint.open(TraceInfo{}).ok());
  const int port = endpoint.port();
  CHECK(get(port, "/capture?seconds=3").rfind("HTTP/1.1 405", 0) == 0);  // GET: not a way to ask
  const std::string ok = get(port, "/capture?seconds=3", "POST");
  CHECK(ok.rfind("HTTP/1.1 202", 0) == 0);
  CHECK(body_of(ok) == "/work/gpuprobe_capture_x.json\n");
  CHECK(get(port, "/capture", "POST").rfind("HTTP/1.1 409", 0) == 0);
  REQUIRE(asked.size() == 2);
  CHECK(asked[0] == "3");
  CHECK(asked[1] == "10");
  CHECK(body_of(get(port, "/nothing")) == "not found: gpuprobe serves /metrics, /capture\n");
  REQUIRE(endpoint.close(Stats{}, kTime).ok());
}
}  // namespace
}  // namespace gpuprobe::metrics
