// Where the GPU worked and where it waited: busy time per stream and device, each gap before a
// kernel classified as HTA does (host wait: the CPU had not launched it yet; kernel wait: launch
// overhead between queued kernels; other), launch delays, tiny kernels, and GPU busy over time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/gpu_breakdown.h"
#include "analysis/intervals.h"

namespace gpuprobe::analysis {

// Work on another stream of the device that a stream's queued wait ended behind (GpuIdle): the
// kernel (or copy) that ended last before the waiting work began, within kBehindSlackNs.
struct WaitedBehind {
  std::string name;
  std::uint32_t stream = 0;
  std::int64_t wait_ns = 0;  // the waits it ended, summed
  std::uint64_t waits = 0;
};

struct StreamStats {
  std::uint32_t device = 0, stream = 0;
  std::int64_t first_ns = 0, last_ns = 0, busy_ns = 0;
  std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_idle_ns = 0;
  std::uint64_t kernels = 0;
  std::uint64_t copies = 0;  // copies and sets
  // Its other idle time (waits with the next work already queued), by what it waited behind on
  // the device's other streams, longest first (at most kMaxBehind); and what none explains.
  std::vector<WaitedBehind> waited_behind;
  std::int64_t unexplained_wait_ns = 0;
};

struct GpuIdleResult {
  std::vector<StreamStats> streams;
  std::map<std::uint32_t, double> device_busy_percent;
  std::uint64_t tiny_kernels = 0;
  std::int64_t tiny_kernel_ns = 0;
  std::uint64_t launches = 0;  // kernels whose launch call is in the trace
  // All kernels: how many, how many a second (of the recorded time with bursts), their median
  // duration, and the median duration of their launch calls (the host's cost of one).
  std::uint64_t kernels = 0;
  double kernels_per_second = 0, kernel_p50_us = 0, launch_call_p50_us = 0;
  double launch_delay_p50_us = 0, launch_delay_p99_us = 0, launch_delay_max_us = 0;
  std::vector<double> busy_timeline;  // share of each of 100 equal slices with GPU work, %
  // Per device, in Options::timeline_bins slices (none unless asked: the report page's).
  std::map<std::uint32_t, std::vector<double>> device_busy_timeline;
  // GPU activity recorded in bursts (gpu_burst=; the kGpuRecordingCounter in the trace): the busy
  // percentages are then of the recorded time, and gaps outside it are no one's idle time.
  bool sampled = false;
  std::int64_t recorded_ns = 0;
  double busiest_percent() const {
    double b = 0;
    for (const auto& [device, busy] : device_busy_percent) b = b > busy ? b : busy;
    return b;
  }
};

// The report's "GPU utilisation" section: busy per device, the temporal breakdown, each stream's
// busy time, waits and idle, launch delay and tiny kernels; empty without GPU streams.
// `gpu_kernel_ns`: all kernels' time, what the tiny kernels are a share of.
Section describe_gpu(const GpuIdleResult& gpu, const GpuBreakdownResult& breakdown,
                     std::int64_t gpu_kernel_ns);

class GpuIdle : public Analysis {
 public:
  // A wait ended behind work on another stream when that work ended at most this long before the
  // waiting work began (an event's signal and the next kernel's start take a few microseconds).
  static constexpr std::int64_t kBehindSlackNs = 20'000;
  static constexpr std::size_t kMaxBehind = 3;  // kept per stream

  struct Options {
    std::int64_t tiny_kernel_ns;         // "tiny": shorter than this
    std::int64_t consecutive_kernel_ns;  // shorter gaps between queued work are kernel wait
    int timeline_bins = 0;               // device_busy_timeline's slices; 0: none
  };
  explicit GpuIdle(const Options& options) : options_(options) {}

  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const GpuIdleResult& result() const { return result_; }
  // The union of all GPU work (kernels, copies, sets), sorted; valid after finish().
  const std::vector<Interval>& gpu_work() const { return gpu_work_; }

 private:
  // With bursts: whether [from, to] lies within one recorded interval.
  bool recorded(std::int64_t from, std::int64_t to) const;

  // GPU work on a stream: kernels, and copies and sets, which occupy the stream as HTA counts.
  struct Span {
    std::int64_t start, end;
    std::uint32_t correlation;
    bool kernel;
    const char* name;
  };
  struct Ended {  // a span of a device, by its end: what another stream may wait behind
    std::int64_t end;
    std::uint32_t stream;
    const char* name;
  };
  // What the wait [from, to) of `stream` ended behind: the work of the device's other streams
  // (`ended`, sorted by end) that ended last within it, at most kBehindSlackNs before `to`.
  static const Ended* behind(const std::vector<Ended>& ended, std::uint32_t stream,
                             std::int64_t from, std::int64_t to);
  const Options options_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Span>> streams_;
  std::vector<Interval> gpu_work_;
  std::vector<std::pair<std::int64_t, bool>> switches_;  // GPU recording on/off, with bursts
  std::vector<Interval> recorded_;                       // from switches_, in finish()
  // correlation -> (start, end). Not absl::flat_hash_map: correlation ids come nearly in order,
  // and std's identity hash keeps neighbours in neighbouring buckets where Abseil's mixing hash
  // scatters them over a million launches (the 10 M-event report spent 13 % of its time here
  // with flat_hash_map, under 2 % with this; bench/RESULTS.md).
  std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> launches_;
  GpuIdleResult result_;
};

}  // namespace gpuprobe::analysis
