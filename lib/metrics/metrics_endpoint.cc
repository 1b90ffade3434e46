#include "metrics/metrics_endpoint.h"

#include <algorithm>
#include <exception>

#include "base/notice.h"
#include "base/printable_text.h"

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
// Checked before anything else, so a wrong address is the error a user sees.
Status check_address(const std::string& value, std::string* host, int* port) {
  if (parse_listen_address(value, host, port)) return {};
  return Status::Error("metrics=" + value +
                       ": expected PORT, IPV4:PORT or [IPV6]:PORT, e.g. 9400 or 0.0.0.0:9400");
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Figures newer than the last response are formatted at most this often per format, and at
// most every kRebuildWhileHeld while slow clients still send the last one.
constexpr std::chrono::seconds kRebuildEvery{1};
constexpr std::chrono::seconds kRebuildWhileHeld{5};
constexpr std::size_t kMaxReasonBytes = 200;
constexpr std::string_view kText = "text/plain; charset=utf-8";
}  // namespace

std::string query_value(std::string_view query, std::string_view name, std::string fallback) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    const std::string_view raw = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+') {
        out += ' ';
      } else if (raw[i] == '%' && i + 2 < raw.size() && hex_digit(raw[i + 1]) >= 0 &&
                 hex_digit(raw[i + 2]) >= 0) {
        out += static_cast<char>(hex_digit(raw[i + 1]) * 16 + hex_digit(raw[i + 2]));
        i += 2;
      } else {
        out += raw[i];
      }
    }
    return out;
  }
  return fallback;
}

MetricsEndpoint::MetricsEndpoint(std::string value, SessionHooks hooks)
    : value_(std::move(value)), hooks_(std::move(hooks)), metrics_(hooks_.ranges) {
  metrics_.set_hooks(hooks_);
}

MetricsEndpoint::~MetricsEndpoint() { stop_server(); }

Status MetricsEndpoint::open(const TraceInfo& info) {
  metrics_.set_rank(info.rank);
  std::string host;
  int port = 0;
  if (Status s = check_address(value_, &host, &port); !s.ok()) return s;
  publish();  // a scrape right after start gets the families, empty
  const Status s = server_.start(host, port, [this](const HttpRequest& r) { return respond(r); });
  if (!s.ok()) {
    return Status::Error("metrics=" + value_ + ": cannot listen on " + host + ":" +
                         std::to_string(port) + " (" + s.message() + ")");
  }
  base::print_notice("metrics at http://" + host + ":" + std::to_string(server_.port()) +
                     "/metrics");
  return {};
}

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
  ++published_generation_;
}

void MetricsEndpoint::stop_server() noexcept {
  server_.stop();
  // Nothing kept past the stop: the responses go with the server.
  for (Built& b : built_) b = Built{};
}

HttpResponse MetricsEndpoint::respond(const HttpRequest& request) {
  if (request.path == "/dump" && hooks_.dump) {
    if (request.method != "POST") {
      return HttpResponse::make(405, kText, "method not allowed: POST /dump\n");
    }
    return dump_response(request.query);
  }
  if (request.path == "/capture" && hooks_.capture) {
    if (request.method != "POST") {
      return HttpResponse::make(405, kText, "method not allowed: POST /capture?seconds=N\n");
    }
    return capture_response(request.query);
  }
  if (request.path != "/metrics") {
    std::string served = "/metrics";
    if (hooks_.dump) served += ", /dump";
    if (hooks_.capture) served += ", /capture";
    return HttpResponse::make(404, kText, "not found: gpuprobe serves " + served + "\n");
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return HttpResponse::make(405, kText, "method not allowed: GET or HEAD\n");
  }
  try {
    return metrics_response(TextExposition::negotiate(request.accept));
  } catch (...) {
    return HttpResponse::make(500, kText, "gpuprobe could not format its metrics\n");
  }
}

HttpResponse MetricsEndpoint::metrics_response(TextFormat format) {
  Built& built = built_[format == TextFormat::kOpenMetrics ? 1 : 0];
  const auto now = std::chrono::steady_clock::now();
  std::uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(published_mu_);
    generation = published_generation_;
  }
  if (built.response.bytes && built.generation == generation) return built.response;
  if (built.response.bytes) {
    const auto age = now - built.at;
    const bool held = built.response.bytes.use_count() > 1;  // slow clients still send it
    if (age < kRebuildEvery || (held && age < kRebuildWhileHeld)) return built.response;
  }
  MetricValues values;
  {
    std::lock_guard<std::mutex> lock(published_mu_);
    values = published_;
    generation = published_generation_;
  }
  const std::string text = values.exposition(format);
  built.response = HttpResponse::make(200, TextExposition(format).content_type(), text);
  built.generation = generation;
  built.at = now;
  return built.response;
}

HttpResponse MetricsEndpoint::dump_response(std::string_view query) const {
  try {
    const std::string reason =
        base::printable_text(query_value(query, "reason", "POST /dump"), kMaxReasonBytes);
    const DumpReply reply = hooks_.dump(reason);
    return HttpResponse::make(reply.http_status, kText, reply.body);
  } catch (...) {
    return HttpResponse::make(500, kText, "gpuprobe could not take the dump request\n");
  }
}

HttpResponse MetricsEndpoint::capture_response(std::string_view query) const {
  try {
    const std::string seconds = query_value(query, "seconds", "10").substr(0, 40);
    const CaptureReply reply = hooks_.capture(seconds);
    return HttpResponse::make(reply.http_status, kText, reply.body);
  } catch (...) {
    return HttpResponse::make(500, kText, "gpuprobe could not take the capture request\n");
  }
}

}  // namespace gpuprobe::metrics
