// Per-step aggregates of a trace, for sinks that summarize rather than list events (TensorBoard):
// each step — the span between two gpuprobe::step() calls — gets its duration, the GPU's busy
// share and kernel count per device, the events dropped meanwhile, and duration statistics and a
// histogram per range name.
//
// Events reach the collector out of order (ranges when they close, GPU work when CUPTI hands its
// buffers over), so a step is summarized only once what falls into it has arrived: after a later
// batch than its step record, and, when GPU work is traced, once GPU records have reached the
// step's end or the trace has moved a second past it (an idle GPU sends nothing).
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::sinks {

// Duration statistics of one range name within one step; milliseconds.
struct RangeSummary {
  std::string name;
  std::uint64_t count = 0;
  double min_ms = 0, max_ms = 0, sum_ms = 0, sum_squares = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  // Histogram buckets as (upper edge, count), edges rising by 2^(1/4); the first bucket is empty
  // and only marks the left edge of the second.
  std::vector<std::pair<double, double>> buckets;
};

struct DeviceSummary {
  std::uint32_t device = 0;
  double busy_percent = 0;    // share of the step some kernel, copy or memset ran, in %
  std::uint64_t kernels = 0;  // kernels that started within the step
};

struct StepSummary {
  std::int64_t step = 0;
  std::int64_t begin_ns = 0, end_ns = 0;  // wall-clock ns since the Unix epoch
  double time_ms = 0;
  std::uint64_t dropped = 0;  // events lost to full rings while the step was summarized
  std::vector<DeviceSummary> devices;
  std::vector<RangeSummary> ranges;  // by name
};

class StepSummaries {
 public:
  // At most `max_samples` range durations wait for their step, and at most `max_names` range
  // names are summarized; beyond that samples are counted in samples_dropped().
  explicit StepSummaries(std::size_t max_samples = std::size_t{1} << 21,
                         std::size_t max_names = 256);

  void add(const EventBatch& batch);
  // Summaries of the steps whose events have all arrived, oldest first. `final` (the session
  // ended) takes every step; if no step was ever marked, the whole session is one step, 0.
  std::vector<StepSummary> take_ready(bool final);

  std::uint64_t samples_dropped() const noexcept { return samples_dropped_; }
  // Range durations and GPU records that arrived after their step was summarized.
  std::uint64_t late() const noexcept { return late_; }

 private:
  struct Sample {
    std::uint32_t name;
    std::int64_t end_ns;
    std::int64_t duration_ns;
  };
  struct GpuInterval {
    std::uint32_t device;
    bool kernel;
    std::int64_t start_ns, end_ns;
  };
  struct PendingStep {
    std::int64_t step;
    std::int64_t begin_ns;
    std::uint64_t batch;  // the batch that delivered it
  };

  std::uint32_t name_index(const CallSite* site);
  StepSummary summarize(std::int64_t step, std::int64_t begin_ns, std::int64_t end_ns);

  std::size_t max_samples_, max_names_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::unordered_map<const CallSite*, std::uint32_t> site_names_;
  std::vector<Sample> samples_;
  std::vector<GpuInterval> gpu_;
  std::map<std::int64_t, PendingStep> steps_;  // by end time
  std::uint64_t batches_ = 0;
  bool gpu_seen_ = false;
  std::int64_t gpu_watermark_ = 0, cpu_watermark_ = 0;
  std::int64_t last_end_ns_ = INT64_MIN;  // the end of the last step summarized
  std::int64_t first_ns_ = INT64_MAX;     // the earliest start seen
  std::int64_t last_step_ = -1;
  std::uint64_t dropped_total_ = 0, dropped_reported_ = 0;
  std::uint64_t samples_dropped_ = 0, late_ = 0;
};

}  // namespace gpuprobe::sinks
