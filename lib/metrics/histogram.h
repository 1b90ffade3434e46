// A duration histogram in the buckets every gpuprobe metric uses, and its exposition.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "gpuprobe/trace_model.hpp"
#include "metrics/text_exposition.h"

namespace gpuprobe::metrics {

// Upper edges of the duration buckets, in seconds: a 1-2-5 series from 10 us to 100 s (+Inf
// follows).
inline constexpr std::array<double, 22> kDurationBuckets = {
    1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2,
    5e-2, 0.1,  0.2,  0.5,  1.0,  2.0,  5.0,  10.0, 20.0, 50.0, 100.0};

// A range's duration in seconds, as every histogram takes it.
inline double duration_seconds(const TimeBase& time, const Event& e) {
  return static_cast<double>(time.duration_ns(e.begin, e.end)) * 1e-9;
}

struct Histogram {
  std::array<std::uint64_t, kDurationBuckets.size() + 1> counts{};  // the last is +Inf
  // The latest event of each bucket (wall_ns 0: none yet), for OpenMetrics exemplars.
  std::array<Exemplar, kDurationBuckets.size() + 1> exemplars{};
  double sum = 0;
  std::uint64_t count = 0;

  // One duration that ended at `wall_ns` on thread `os_tid`.
  void add(double seconds, std::int64_t wall_ns = 0, std::int64_t os_tid = 0);
  // The _bucket (cumulative, with `le`, and its exemplar), _sum and _count samples of `name`.
  void write(TextExposition* out, std::string_view name, Labels labels) const;
};

}  // namespace gpuprobe::metrics
