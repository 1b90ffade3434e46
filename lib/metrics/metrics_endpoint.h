// `metrics=[HOST:]PORT`: the session's metrics (session_metrics.h) served over HTTP for
// Prometheus to scrape, `GET /metrics` in OpenMetrics when the Accept header asks for it, else
// the text exposition format 0.0.4 (text_exposition.h), by civetweb
// (civetweb_library.h). HOST is 127.0.0.1 unless given (an IPv4 address, or an IPv6 one in
// brackets): other interfaces are an explicit choice. Only GET and HEAD of /metrics are served,
// and POST /dump[?reason=TEXT] when the session has a flight recorder (200 with the dump's
// directory, 429 when a limit holds it; anything else: 404 or 405); two worker threads, a short
// queue, 8 KiB requests and 5 s timeouts at most, no keep-alive. After each batch the collector
// copies the figures (a few KiB, no formatting) under a lock; a request copies them under the same
// lock and formats its copy on the server's thread — so neither side holds the lock longer than a
// copy, and a scrape sees everything drained so far. The server runs while the session does.
#pragma once

#include <mutex>
#include <string>

#include "gpuprobe/sink.hpp"
#include "metrics/session_metrics.h"

struct mg_connection;
struct mg_context;

namespace gpuprobe::metrics {

struct CivetwebApi;

// "9400" -> 127.0.0.1:9400; "0.0.0.0:9400"; "[::1]:9400". False when `value` is none of these.
bool parse_listen_address(std::string_view value, std::string* host, int* port);

class MetricsEndpoint : public Sink {
 public:
  explicit MetricsEndpoint(std::string value, SessionHooks hooks = {});
  ~MetricsEndpoint() override;

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // The port it listens on (useful with port 0: one the system picks); 0 before open().
  int port() const noexcept { return port_; }

 private:
  static int handle(mg_connection* conn, void* self);
  void publish();
  void stop_server() noexcept;

  // POST /dump.
  void handle_dump(mg_connection* conn) const;

  std::string value_;
  SessionHooks hooks_;
  SessionMetrics metrics_;
  // What a request reads: the figures as of the collector's last batch.
  mutable std::mutex published_mu_;
  MetricValues published_;
  const CivetwebApi* api_ = nullptr;
  mg_context* server_ = nullptr;
  std::string host_;  // as configured: "127.0.0.1", "0.0.0.0", "[::1]"
  int port_ = 0;
};

}  // namespace gpuprobe::metrics
