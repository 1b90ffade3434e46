// The triggers that watch the recorded events (slow:NAME>T, pNN:NAME>T/W over ranges; recompile
// and recompile>N/W over torch.compile's recompile marks), evaluated on the collector thread over
// each batch the flight recorder receives: one hash lookup per range, so watching costs the
// recording threads nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flight/rolling_quantile.h"
#include "flight/trigger_spec.h"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::flight {

// A trigger that fired, with what fired it.
struct Firing {
  const TriggerSpec* spec = nullptr;
  std::string reason;  // one sentence: "request took 251.3 ms > 200 ms"
  std::uint64_t at_tick = 0;
  std::uint32_t thread = 0;  // where the marker goes: the thread of the range that fired it
  std::vector<std::pair<std::string, double>> values;  // {"duration_ms", 251.3}, ...
};

class RangeTriggers {
 public:
  // The slow, percentile and recompile triggers of `specs` (signals are not watched here).
  explicit RangeTriggers(const std::vector<TriggerSpec>& specs);

  bool empty() const noexcept { return watched_.empty(); }
  // Evaluates the triggers over `batch`; appends what fired: a slow trigger fires once per
  // batch at most (for its slowest range), a percentile trigger when it goes above its
  // threshold, and again only after it went back below; a recompile trigger once per batch at
  // most, for the batch's last recompile (with a count: when the count goes above it, and again
  // only after it went back down to it).
  void observe(const EventBatch& batch, std::vector<Firing>* fired);

 private:
  struct Watched {
    const TriggerSpec* spec;
    RollingQuantile window;  // percentile triggers only
    std::uint64_t min_samples = 0;
    bool above = false;
    bool touched = false;
    std::int64_t slowest_ns = 0;  // in this batch, slow triggers
    std::uint64_t slowest_tick = 0;
    std::uint32_t slowest_thread = 0;
    std::deque<std::int64_t> recompiles;  // recompile>N/W: the wall times within the window
  };
  // A recompile mark seen in the batch (the last one fires).
  struct Recompile {
    std::string text;  // "0/3: tensor 'x' size mismatch ..."
    std::uint64_t tick = 0;
    std::uint32_t thread = 0;
  };
  void observe_recompiles(const TimeBase& time, const std::vector<Recompile>& seen,
                          std::vector<Firing>* fired);
  const std::vector<std::uint32_t>& watchers_of(const CallSite* site);

  std::vector<Watched> watched_;
  std::unordered_map<const CallSite*, std::vector<std::uint32_t>> by_site_;
  bool recompile_triggers_ = false;
};

}  // namespace gpuprobe::flight
