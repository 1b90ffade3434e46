// The triggers of the flight recorder as the config names them (`trigger=`, several joined with
// `+`): parsed with the config (flight_options.h), so that a mistake is the session's one error
// at start; evaluated by triggers.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::flight {

struct TriggerSpec {
  enum class Kind : std::uint8_t {
    kSlow,        // slow:NAME>200ms: one range of NAME longer than the threshold
    kPercentile,  // p99:NAME>50ms/10s: the quantile of NAME over a rolling window above it
    kSignal,      // signal[:SIGUSR1]: the process receives the signal
    // recompile: torch.compile recompiles a frame (gpuprobe.torch.watch_compile()'s "recompile
    // <id>: <guard>" marks); recompile>3/60s: more than 3 recompiles within 60 s (a storm).
    kRecompile,
  };
  Kind kind = Kind::kSlow;
  std::string text;               // as written, for messages and the dump's description
  std::string name;               // the range name (kSlow, kPercentile)
  double quantile = 0;            // 0.99 for p99 (kPercentile)
  std::int64_t threshold_ns = 0;  // kSlow, kPercentile
  std::int64_t window_ns = 0;     // kPercentile, kRecompile with a count
  std::uint32_t more_than = 0;    // kRecompile: fires past this many within window_ns
  int signal = 0;                 // kSignal
};

// Parses the value of `trigger=` ("slow:request>200ms+p99:request>50ms/10s+signal+recompile").
Status parse_triggers(std::string_view value, std::vector<TriggerSpec>* out);

}  // namespace gpuprobe::flight
