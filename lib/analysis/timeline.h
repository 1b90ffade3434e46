// The incident over time, for the report page (ReportOptions::timeline): each instance of the
// range the jitter explains (its start and duration), its rolling P50 and P99, GPU busy per
// device, and the jitter's cause events — GC pauses, compiles, allocator calls,
// synchronizations, large copies — and graph breaks as marks on the same axis. Not collected
// unless asked: a page's worth of points is not wanted in every --json.
//
// Bounded: past kPointsPerName instances of a name, one in two of those kept is dropped (and
// so on), so what stays is every Nth instance of the whole run, which the page states; marks
// past kMarksPerKind keep the longest.
//
// For the page's range chooser, the other repeated ranges too (at most kChoices, the heaviest
// repeated kRepeats times or more): each one's instances thinned the same way to kChoicePoints,
// its rolling quantiles, median and outliers (range_outliers.h) — what redraws the latency chart
// and the outlier table for it without another report run.
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
#include "analysis/names.h"
#include "analysis/range_outliers.h"

namespace gpuprobe::analysis {

// The rolling quantiles at one time, over the instances that began in the window before it.
struct RollingSample {
  std::int64_t at_ns;
  double p50_ms, p99_ms;
};

// Another repeated range the page can plot instead: as TimelineResult's own, with its outliers.
struct RangeOverTime {
  std::string name;
  std::uint64_t instances = 0, stride = 1;
  std::vector<Interval> points;  // (begin, end) in wall-clock ns, by begin
  std::vector<RollingSample> rolling;
  double p50_ms = 0;
  RangeOutliers outliers;
};

struct TimelineResult {
  std::string latency_name;      // "" when the trace has no range the jitter explains
  std::uint64_t instances = 0;   // of that range, all of them
  std::uint64_t stride = 1;      // 1 in `stride` of them is in `points`
  std::vector<Interval> points;  // (begin, end) in wall-clock ns, by begin
  double p50_ms = 0;             // its median
  // The rolling quantiles: at each sample's time (one each `rolling_every_ns`), over the
  // instances that began in the window before it; a time whose window has no instance has no
  // sample (the page breaks its lines there).
  std::int64_t window_ns = 0, rolling_every_ns = 0;
  using Rolling = RollingSample;
  std::vector<Rolling> rolling;
  // Kind name -> its events, by begin; and how many were left out past the cap.
  std::map<std::string, std::vector<Interval>> marks;
  std::uint64_t marks_left_out = 0;
  std::vector<RangeOverTime> others;  // the chooser's other ranges, heaviest first
};

class Timeline : public Analysis {
 public:
  static constexpr std::size_t kPointsPerName = 200'000;
  static constexpr std::size_t kPointsInAll = 2'000'000;  // 32 MB of points
  static constexpr std::size_t kMarksPerKind = 20'000;
  static constexpr int kRollingSamples = 400;
  static constexpr int kGpuBins = 400;  // GpuIdle's device_busy_timeline, when this is on
  static constexpr std::size_t kMemoryPoints = 4000;    // Memory's over_time, when this is on
  static constexpr std::size_t kChoices = 8;            // other ranges the page can switch to
  static constexpr std::size_t kChoicePoints = 20'000;  // each one's points, at most
  static constexpr std::uint64_t kRepeats = 20;         // instances that make a range repeated

  // Reads the jitter's target and causes, and the names' statistics, at finish(): runs after
  // both.
  Timeline(const Jitter& jitter, const Names& names) : jitter_(jitter), names_(names) {}
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
  const Names& names_;
  std::unordered_map<const NameStats*, Series> series_;
  std::size_t points_ = 0;
  std::vector<Interval> graph_breaks_;
  TimelineResult result_;
};

}  // namespace gpuprobe::analysis
