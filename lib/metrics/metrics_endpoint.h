// `metrics=[HOST:]PORT`: the session's metrics (session_metrics.h) served over HTTP for
// Prometheus to scrape, `GET /metrics` in OpenMetrics when the Accept header asks for it, else
// the text exposition format 0.0.4 (text_exposition.h), by gpuprobe's own small server
// (http_server.h: one thread, non-blocking, deadlines and connection caps that keep clients which
// hold connections or never read from starving a scrape). HOST is 127.0.0.1 unless given (an IPv4
// address, or an IPv6 one in brackets): other interfaces are an explicit choice. Only GET and HEAD
// of /metrics are served, and POST /dump[?reason=TEXT] when the session has a flight recorder
// (200 with the dump's directory, 429 when a limit holds it; anything else: 404 or 405); the
// reason is made printable text of at most 200 bytes (base/printable_text.h); and POST
// /capture[?seconds=N] (default 10) when the session takes on-demand windows: 202 with the file
// the window will be, 409 while one runs, 400 for bad seconds (session/capture_window.h).
// After each batch the collector copies the figures (a few KiB, no formatting) under a lock. The
// server formats them into a response at most once a second per format, when a scrape finds the
// last one older than the figures (at most once in 5 s while slow clients still hold the last
// one: at most 3 responses per format are alive), and sends every scrape of that time the same
// immutable bytes. The server runs while the session does; its stop closes every socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "gpuprobe/sink.hpp"
#include "metrics/http_server.h"
#include "metrics/session_metrics.h"
#include "metrics/text_exposition.h"

namespace gpuprobe::metrics {

// "9400" -> 127.0.0.1:9400; "0.0.0.0:9400"; "[::1]:9400". False when `value` is none of these.
bool parse_listen_address(std::string_view value, std::string* host, int* port);

// The decoded value of `name` in a query string ("a=1&reason=p99%20high"), '+' as a space;
// `fallback` when it is not there.
std::string query_value(std::string_view query, std::string_view name, std::string fallback);

class MetricsEndpoint : public Sink {
 public:
  explicit MetricsEndpoint(std::string value, SessionHooks hooks = {});
  ~MetricsEndpoint() override;

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // The port it listens on (useful with port 0: one the system picks); 0 before open().
  int port() const noexcept { return server_.port(); }

 private:
  // The server's whole behaviour, on its thread.
  HttpResponse respond(const HttpRequest& request);
  HttpResponse metrics_response(TextFormat format);
  HttpResponse dump_response(std::string_view query) const;
  HttpResponse capture_response(std::string_view query) const;
  void publish();
  void stop_server() noexcept;

  std::string value_;
  SessionHooks hooks_;
  SessionMetrics metrics_;
  // What a request reads: the figures as of the collector's last batch.
  std::mutex published_mu_;
  MetricValues published_;
  std::uint64_t published_generation_ = 0;
  // The server's thread only: the last response built in each format.
  struct Built {
    std::uint64_t generation = 0;
    std::chrono::steady_clock::time_point at;
    HttpResponse response;
  };
  Built built_[2];  // [TextFormat::kPrometheus], [TextFormat::kOpenMetrics]
  HttpServer server_;
};

}  // namespace gpuprobe::metrics
