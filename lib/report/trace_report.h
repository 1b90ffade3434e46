// `gpuprobe report`: what a trace says about where time went and why latency jittered. A Sink,
// so it reads any trace format in one streaming pass; it keeps per-name statistics (fixed size),
// the slowest instances of each range name, the intervals that can explain an outlier (GC,
// compiles, allocator calls, synchronizations, large copies) and GPU work per stream — so memory
// grows with what it keeps, not with the file.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuprobe/sink.hpp"
#include "report/log_histogram.h"

namespace gpuprobe::report {

struct ReportOptions {
  std::int64_t tiny_kernel_ns = 10'000;  // "tiny": shorter than this
  // Gaps shorter than this between queued work are kernel wait (launch overhead). HTA's
  // consecutive_kernel_delay defaults to 30 and is applied in the trace's time unit, which is
  // microseconds for Kineto's (and gpuprobe's) JSON: 30 us, so that the two agree.
  std::int64_t consecutive_kernel_ns = 30'000;
  std::int64_t large_copy_bytes = 1 << 20;  // copies worth naming as jitter causes
  std::string latency_name;                 // the range whose outliers are explained; "" = auto
  double outlier_threshold_ms = 0;          // 0: above P99
  std::size_t keep_slowest = 64;            // slowest instances kept per range name
  // Only events that start within [window_begin_ns, window_end_ns) (wall-clock ns), e.g. some
  // steps' span; the default takes everything.
  std::int64_t window_begin_ns = INT64_MIN, window_end_ns = INT64_MAX;
};

// The wall-clock span of steps first..last (ProfilerStep#N) in a trace: a Sink for a first pass.
class StepWindow : public Sink {
 public:
  StepWindow(std::int64_t first, std::int64_t last) : first_(first), last_(last) {}
  Status open(const TraceInfo&) override { return {}; }
  Status write(const EventBatch& batch) override;
  Status close(const Stats&, const TimeBase&) override { return {}; }
  bool found() const { return begin_ns <= end_ns; }
  std::int64_t begin_ns = INT64_MAX, end_ns = INT64_MIN;

 private:
  std::int64_t first_, last_;
};

struct NameStats {
  std::string name;
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, min_ns = INT64_MAX, max_ns = 0;
  std::int64_t gpu_ns = 0;  // ranges: GPU time of the kernels they launched
  // Ranges: time on their own thread outside any recorded child range (torch's "self CPU").
  std::int64_t self_ns = 0;
  // Kernels launched with declared costs (gpuprobe::launch's KernelCost): their sums, and the
  // time of those calls, for achieved bandwidth and FLOP/s.
  double declared_bytes = 0, declared_flops = 0;
  std::int64_t declared_ns = 0;
  std::unique_ptr<LogHistogram> histogram = std::make_unique<LogHistogram>();
  std::unique_ptr<LogHistogram> self_histogram;  // ranges only: their self times
  // Ranges that are runs of compiled code: 1 an Inductor graph's ("## Call CompiledFxGraph" from
  // torch.profiler, "compiled graph" from gpuprobe.torch), 2 a Dynamo frame's ("Torch-Compiled
  // Region", which also holds the eager code at a graph break); 0 neither.
  std::uint8_t compiled_run = 0;
  struct Instance {
    std::int64_t begin, end;
    std::uint32_t thread;
    std::int64_t self_ns;
  };
  std::vector<Instance> slowest;  // a min-heap on duration
  // The duration at quantile q, within [min, max] (the histogram's bucket middles may not be).
  double quantile_ns(double q) const {
    const double v = histogram->quantile_ns(q);
    return v < static_cast<double>(min_ns)   ? static_cast<double>(min_ns)
           : v > static_cast<double>(max_ns) ? static_cast<double>(max_ns)
                                             : v;
  }
  // One instance; `self` < 0 for kernels (no self time).
  void add(std::int64_t begin, std::int64_t end, std::uint32_t thread, std::size_t keep,
           std::int64_t self = -1);
};

struct StreamStats {
  std::uint32_t device = 0, stream = 0;
  std::int64_t first_ns = 0, last_ns = 0, busy_ns = 0;
  std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_idle_ns = 0;
  std::uint64_t kernels = 0;
  std::uint64_t copies = 0;  // copies and sets
};

// Where a kernel with declared bytes and FLOPs sits on the device's roofline.
struct RooflineRow {
  std::string name;
  double intensity = 0;        // FLOP per byte
  double achieved_gbps = 0;    // GB/s
  double achieved_tflops = 0;  // TFLOP/s
  std::string bound;           // "memory" or "compute" (against the ridge point), "" without peaks
  double percent_of_peak = 0;  // of the bound resource's peak
};

// Copies of one direction: bytes, time and achieved bandwidth against the link's peak.
struct CopyRow {
  std::string kind;  // "HtoD", "DtoH", "DtoD", ...
  std::uint64_t copies = 0, bytes = 0;
  std::int64_t ns = 0;
  double achieved_gbps = 0, peak_gbps = 0;  // peak 0: unknown for this device
};

// Published peaks of a device, by name: dense FP32 FLOP/s (not tensor cores), memory and
// host-link bandwidth; zeros when the device is not in gpuprobe's table.
struct DevicePeaks {
  double fp32_tflops = 0, memory_gbps = 0, host_link_gbps = 0;
};
DevicePeaks device_peaks(const std::string& device_name);

// What likely bounds a kernel with no declared costs, from its name: "communication" for
// collectives (NCCL, all-reduce, all-gather, ...; also CPU ranges such as "nccl:all_reduce" or
// "gloo:all_reduce"), "compute" for matrix multiplies, convolutions and attention (GEMM, conv,
// xmma/wgmma, cutlass, flash/fmha, Inductor templates), "memory" for elementwise, reductions,
// norms, softmax, copies, gathers and optimizer updates (a few FLOPs per byte); "" when the name
// says neither.
std::string kernel_class_from_name(const std::string& name);

// A cause of latency an outlier overlapped, and for how long.
struct CauseOverlap {
  std::string cause;
  std::int64_t overlap_ns = 0;
  std::uint64_t events = 0;
};

struct Outlier {
  std::int64_t begin_ns = 0, duration_ns = 0;
  std::string thread;
  std::vector<CauseOverlap> causes;  // by overlap, largest first
};

struct LatencyRow {
  std::string name;
  std::uint64_t count = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
};

// Everything the report shows, computed by TraceReport::finish().
struct ReportResult {
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint64_t events = 0;
  std::vector<const NameStats*> kernels, ranges;  // sorted by total time
  std::int64_t gpu_kernel_ns = 0;
  std::vector<StreamStats> streams;
  std::map<std::uint32_t, double> device_busy_percent;
  std::uint64_t tiny_kernels = 0;
  std::int64_t tiny_kernel_ns = 0;
  std::uint64_t launches = 0;
  double launch_delay_p50_us = 0, launch_delay_p99_us = 0, launch_delay_max_us = 0;
  std::vector<LatencyRow> latency;
  std::string latency_name;
  double outlier_threshold_ms = 0;
  std::vector<Outlier> outliers;
  std::vector<CauseOverlap> cause_summary;  // over all outliers
  std::string verdict;                      // what bounds the program, in a sentence
  std::vector<double> gpu_busy_timeline;    // share of each of 100 equal slices with GPU work, %
  // The latency range's durations: (bucket's upper edge ms, count), and its P50/P99.
  std::vector<std::pair<double, std::uint64_t>> latency_histogram;
  double latency_p50_ms = 0, latency_p99_ms = 0;
  std::uint64_t latency_count = 0;  // instances of the latency range
  std::vector<DeviceInfo> devices;
  std::uint64_t dropped = 0, gpu_dropped = 0;
  int rank = -1;      // the trace's distributed rank, when it says
  DevicePeaks peaks;  // of device 0, when known
  std::vector<RooflineRow> roofline;
  // GPU kernel time by kernel_class_from_name().
  std::int64_t communication_class_ns = 0, compute_class_ns = 0, memory_class_ns = 0,
               unclassified_ns = 0;
  std::vector<CopyRow> copies;
  // torch.compile, from gpuprobe.torch's compile ranges and marks.
  std::uint64_t names_overflowed = 0;  // names past the recorder's or the reader's caps
  struct Compile {
    std::uint64_t compiles = 0;
    std::int64_t compile_ns = 0;          // T_compile: time inside compiles
    std::vector<std::string> recompiles;  // "compile id: reason"
    std::vector<std::string> fallbacks;   // "compile id: frame: error", frames run eagerly
    std::vector<std::string> limit_hits;  // Dynamo's recompile-limit warnings
    std::map<std::string, std::uint64_t> graph_breaks;  // reason -> count
    std::uint64_t steps = 0;                            // for the amortised cost per step
    // The last values of gpuprobe.torch's compile counters; negative when absent.
    double cache_hits = -1, cache_misses = -1, graph_ops = -1, kernels_generated = -1;
    double speedup = -1;  // S = T_eager / T_compiled, from gpuprobe.torch.compare()
    // Runs of compiled code (graph runs when the trace has them, else frames): m and T_execute,
    // and the time they are a share p of (the trace's outside compiles) for the Amdahl bound.
    std::uint64_t runs = 0;
    std::int64_t run_ns = 0, base_ns = 0;
    // Derived; negative when unknown. B = T_compile / m; p = T_execute / base; Amdahl's bound
    // 1 / (1 - p) on the gain from faster compiled code; the whole program's speedup over eager
    // (1 - p) + p S; and the runs n* = T_compile / ((T_execute / m) (S - 1)) after which the
    // compiles have paid for themselves.
    double amortised_ms = -1, share = -1, amdahl_bound = -1, program_speedup = -1,
           break_even_runs = -1;
  } compile;
};

class TraceReport : public Sink {
 public:
  explicit TraceReport(ReportOptions options = {}) : options_(std::move(options)) {}

  Status open(const TraceInfo& info) override;
  // Devices a reader learned only at the end of its input (a Perfetto trace converted from
  // Chrome JSON states them after its first events).
  void update_info(const TraceInfo& info) override {
    if (info_.devices.empty()) info_.devices = info.devices;
  }
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // Valid after close(), while this report lives: its name rows point into the report.
  const ReportResult& result() const { return result_; }

 private:
  enum Cause { kGc, kCompile, kAllocator, kSync, kLargeCopy, kCauses };
  // A compile range: gpuprobe.torch's (category compile) or torch.profiler's Dynamo span.
  static bool is_frame_compile(const CallSite& site);
  void add_compile_mark(const char* name);
  void add_profiler_compile_id(const char* name);
  struct Interval {
    std::int64_t begin, end;
  };
  // GPU work on a stream: kernels, and copies and sets, which occupy the stream as HTA counts.
  struct KernelSpan {
    std::int64_t start, end;
    std::uint32_t correlation;
    bool kernel;
  };

  // A thread's ranges whose self time is not known yet. Ranges reach the report either children
  // first (gpuprobe's rings write a range when it ends) or parents first (files sorted by start,
  // as Kineto's); both orders give exact self times.
  struct OpenRange {
    std::int64_t begin, end, child_ns;
    NameStats* stats;
    bool linked;  // already counted in a parent's child_ns
  };
  struct ThreadNesting {
    std::vector<OpenRange> stack;  // a chain, each inside the one below it
    // Finished ranges no parent has claimed: a parent arriving after its children claims them.
    // Bounded: a parent with more direct children than this, children first, loses the oldest.
    std::vector<Interval> roots;
  };
  static constexpr std::size_t kMaxRoots = 8192;

  // Runs of compiled code of one kind, nested or overlapping ones merged per thread as they come.
  struct Runs {
    std::unordered_map<std::uint32_t, Interval> open;  // per thread: the run being merged
    std::int64_t ns = 0;
    std::uint64_t count = 0;
    void add(std::uint32_t thread, std::int64_t begin, std::int64_t end);
    void flush();
  };

  NameStats& stats_for(std::unordered_map<std::string, NameStats>& table, const char* name);
  void add_range(std::uint32_t thread, NameStats& stats, std::int64_t begin, std::int64_t end);
  // Pops the top of `t`'s stack, whose children have all arrived, into its name's statistics.
  void retire_top(std::uint32_t thread, ThreadNesting& t);
  void add_gpu(const GpuActivity& a, std::int64_t begin, std::int64_t end);
  void finish();
  void explain_outliers();

  ReportOptions options_;
  TraceInfo info_;
  std::vector<ThreadInfo> threads_;
  std::unordered_map<std::string, NameStats> kernel_names_, range_names_;
  // Names from one trace reader are stable pointers: found by pointer before by text.
  std::unordered_map<const void*, NameStats*> kernel_cache_, range_cache_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<KernelSpan>> streams_;
  std::vector<Interval> gpu_work_;  // kernels, copies, sets: for GPU idle within outliers
  std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::int64_t>>
      launches_;  // corr -> (start, end)
  std::vector<Interval> causes_[kCauses];
  std::unordered_map<std::uint32_t, ThreadNesting> nesting_;
  Runs compiled_runs_[3];          // by NameStats::compiled_run
  std::map<int, CopyRow> copies_;  // by MemcpyKind
  std::uint64_t events_ = 0;
  std::int64_t first_ns_ = INT64_MAX, last_ns_ = INT64_MIN;
  ReportResult result_;
};

}  // namespace gpuprobe::report
