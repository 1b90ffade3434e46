// The flight recorder's figures as metrics (gpuprobe_dumps_*, gpuprobe_flight_*), and the hooks
// through which the metrics outputs reach what they do not know — the recorder (lib/flight/),
// the rings (lib/core/) and the config: the session, which builds them all, hands these in
// (session/builtin_sinks.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metrics_options.h"
#include "metrics/text_exposition.h"

namespace gpuprobe::metrics {

struct FlightFigures {
  bool enabled = false;  // a flight recorder runs in this session: the families are written
  std::uint64_t dumps_written = 0;
  std::uint64_t dumps_failed = 0;
  std::uint64_t dumps_deleted = 0;
  std::uint64_t triggers_fired = 0;
  std::uint64_t suppressed_cooldown = 0;
  std::uint64_t suppressed_hourly = 0;
  std::uint64_t suppressed_pending = 0;
  std::uint64_t events_kept = 0;
  std::uint64_t bytes = 0;
  std::uint64_t overwritten_age = 0;
  std::uint64_t overwritten_memory = 0;

  void write(TextExposition* out) const;
};

// The answer to POST /dump.
struct DumpReply {
  int http_status = 404;  // 200: accepted, the body is the dump's directory; 404: no flight
                          // recorder; 429: a limit holds it
  std::string body;
};

// The answer to POST /capture (an on-demand window: session/capture_window.h).
struct CaptureReply {
  int http_status = 404;  // 202: recording, the body is the file it will be; 400: bad seconds;
                          // 409: a window runs already; 503: the session cannot take one now
  std::string body;
};

struct SessionHooks {
  std::function<FlightFigures()> figures;                  // read after each batch
  std::function<DumpReply(std::string_view reason)> dump;  // POST /dump
  // POST /capture?seconds=N: the query's "seconds" as sent ("10" when absent).
  std::function<CaptureReply(std::string_view seconds)> capture;
  std::function<std::uint64_t()> ring_bytes;  // read after each batch
  RangeSelection ranges;                      // the session's metrics_names= and metrics_ranges=
};

}  // namespace gpuprobe::metrics
