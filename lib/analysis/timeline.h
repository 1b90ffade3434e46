// The incident over time, for the report page (ReportOptions::timeline): each instance of the
// range the jitter explains (its start and duration), its rolling P50 and P99, GPU busy per
// device, and the jitter's cause events — GC pauses, compiles, allocator calls,
// synchronizations, large copies — and graph breaks as marks on the same axis. Not collected
// unless asked: a page's worth of points is not wanted in every --json.
//
// Bounded: past kPointsPerName instances of a name, one in two of those kept is dropped (and
// so on), so what stays is every Nth instance of the whole run, which the page states; marks
// past kMarksPerKind keep the longest.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/gpu_idle.h"
#include "analysis/intervals.h"
#include "analysis/jitter.h"

namespace gpuprobe::analysis {

struct TimelineResult {
  std::string latency_name;      // "" when the trace has no range the jitter explains
  std::uint64_t instances = 0;   // of that range, all of them
  std::uint64_t stride = 1;      // 1 in `stride` of them is in `points`
  std::vector<Interval> points;  // (begin, end) in wall-clock ns, by begin
  // The rolling quantiles: at each sample's time, over the instances that began in the window
  // before it.
  std::int64_t window_ns = 0;
  struct Rolling {
    std::int64_t at_ns;
    double p50_ms, p99_ms;
  };
  std::vector<Rolling> rolling;
  // Kind name -> its events, by begin; and how many were left out past the cap.
  std::map<std::string, std::vector<Interval>> marks;
  std::uint64_t marks_left_out = 0;
};

class Timeline : public Analysis {
 public:
  static constexpr std::size_t kPointsPerName = 200'000;
  static constexpr std::size_t kPointsInAll = 2'000'000;  // 32 MB of points
  static constexpr std::size_t kMarksPerKind = 20'000;
  static constexpr int kRollingSamples = 400;
  static constexpr int kGpuBins = 400;  // GpuIdle's device_busy_timeline, when this is on
  static constexpr std::size_t kMemoryPoints = 4000;  // Memory's over_time, when this is on

  // Reads the jitter's target and causes at finish(): runs after it.
  explicit Timeline(const Jitter& jitter) : jitter_(jitter) {}
  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const TimelineResult& result() const { return result_; }

 private:
  struct Series {
    std::vector<Interval> kept;
    std::uint64_t seen = 0, stride = 1;
    void thin();  // keeps every other point: the stride doubles
  };
  const Jitter& jitter_;
  std::unordered_map<const NameStats*, Series> series_;
  std::size_t points_ = 0;
  std::vector<Interval> graph_breaks_;
  TimelineResult result_;
};

}  // namespace gpuprobe::analysis
