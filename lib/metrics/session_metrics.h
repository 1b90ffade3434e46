// What a session's events say as Prometheus metrics, computed on the collector from the batches
// every sink gets — nothing is added to the recording path: a duration histogram per range name
// (a bounded set of names: range names are the user's, kernel names are never labels), step
// durations, kernels and busy time per GPU, and the events delivered and dropped.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::metrics {

// Upper edges of the duration buckets, in seconds: a 1-2-5 series from 10 us to 100 s (+Inf
// follows).
inline constexpr std::array<double, 22> kDurationBuckets = {
    1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2,
    5e-2, 0.1,  0.2,  0.5,  1.0,  2.0,  5.0,  10.0, 20.0, 50.0, 100.0};

// Duration statistics in kDurationBuckets, the last bucket +Inf.
struct Histogram {
  std::array<std::uint64_t, kDurationBuckets.size() + 1> counts{};
  double sum = 0;
  std::uint64_t count = 0;
  void add(double seconds);
};

// The figures themselves, a value: the collector keeps adding to one, and whoever serves them
// (metrics_endpoint.h) copies it — a few kilobytes — and formats the copy on its own thread.
struct MetricValues {
  struct Device {
    std::uint64_t kernels = 0;
    double busy_seconds = 0;
    std::int64_t covered_until_ns = LLONG_MIN;  // busy time counted up to here
  };
  std::map<std::string, Histogram> ranges;  // by name, sorted: a stable exposition
  Histogram steps;
  std::map<std::uint32_t, Device> devices;
  std::uint64_t names_overflowed = 0;
  std::uint64_t events = 0;
  std::uint64_t dropped = 0;

  // Every metric, in the text exposition format.
  std::string exposition() const;
};

class SessionMetrics {
 public:
  // Ranges of the first `max_names` names get a histogram each; later names are counted in
  // gpuprobe_range_names_overflowed_total.
  explicit SessionMetrics(std::size_t max_names = 64) : max_names_(max_names) {}

  void add(const EventBatch& batch);
  // The session's final figures, which a batch does not carry.
  void finish(const Stats& stats);
  const MetricValues& values() const noexcept { return values_; }
  std::string exposition() const { return values_.exposition(); }

 private:
  Histogram* histogram_for(const CallSite* site);

  std::size_t max_names_;
  MetricValues values_;
  std::unordered_map<const CallSite*, Histogram*> by_site_;  // null: past the name cap
};

}  // namespace gpuprobe::metrics
