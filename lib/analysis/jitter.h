// Why the slowest instances of the latency range were slow: each outlier (above P99, or a given
// threshold) with the recorded causes it overlapped — GC pauses, compiles, allocator calls,
// synchronizations, large copies — and two derived from the outlier itself: GPU idle (no GPU
// work within it) and CPU gap (its thread outside any recorded child range for longer than
// usual).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/cpu_state.h"
#include "analysis/gpu_idle.h"
#include "analysis/intervals.h"
#include "analysis/names.h"
#include "analysis/outlier_children.h"

namespace gpuprobe::analysis {

// A cause of latency an outlier overlapped, and for how long.
struct CauseOverlap {
  std::string cause;
  std::int64_t overlap_ns = 0;
  std::uint64_t events = 0;
  // Of the overlap, what lies within each outlier's time above the median (at most all of it).
  std::int64_t explained_ns = 0;
  std::string detail;  // for one outlier: what more is known (what ran while it was blocked)
};

// What a blocked outlier waited behind (analysis/cpu_state.h): another thread's range, how long
// it overlapped the outlier and how much of that its thread was on a CPU (-1: not sampled), and
// how many other threads waited at the same place.
struct BlockedBehind {
  std::string range, thread;
  std::int64_t overlap_ns = 0, on_cpu_ns = -1;
  std::int64_t waiting_ns = -1;  // of the overlap, the holder's thread waiting for a CPU
  int other_waiters = 0;
};

struct Outlier {
  std::int64_t begin_ns = 0, duration_ns = 0;
  std::int64_t excess_ns = 0;  // above the median instance
  std::string thread;
  std::int64_t os_tid = 0;
  std::vector<CauseOverlap> causes;  // by overlap, largest first
  std::vector<Deviation> children;   // the ranges inside it that deviated, top-down
  BlockedBehind blocked_behind;      // when blocked and its holder found (range not empty)
};

struct JitterResult {
  std::string latency_name;  // the range explained; "" when the trace has none to explain
  // Why that range (or why none): --latency's, the steps, or the heaviest range of the program's
  // own at the top level of its thread; and what was passed over.
  std::string latency_reason;
  std::uint64_t latency_count = 0;
  double outlier_threshold_ms = 0;
  bool threshold_given = false;             // --threshold-ms's, else the P99
  std::vector<Outlier> outliers;            // slowest first
  std::vector<CauseOverlap> cause_summary;  // over all outliers, largest first
  // The outliers' time above the median instance, summed: what the causes' shares are of.
  std::int64_t excess_ns = 0;
  // The latency range's durations: (bucket's upper edge ms, count), and its P50/P99.
  std::vector<std::pair<double, std::uint64_t>> latency_histogram;
  double latency_p50_ms = 0, latency_p99_ms = 0;
};

// The report's "jitter" section: the range explained and why, each outlier (limited as `options`
// say) with what overlapped it, the ranges inside it that deviated and the allocator then, and
// each cause's share across outliers; or why no range was explained.
// `trace_start_ns`: what the outliers' times are given from; `any_ranges`: whether the trace
// had ranges (without, there is nothing to say of none explained); `outlier_notes`: a line to say
// beneath each outlier, in order, when not empty (memory.h's describe_outlier_memory).
Section describe_jitter(const JitterResult& j, std::int64_t trace_start_ns, bool any_ranges,
                        const std::vector<std::string>& outlier_notes, const TextOptions& options);

class Jitter : public Analysis {
 public:
  struct Options {
    std::string latency_name;       // the range whose outliers are explained; "" = auto
    double outlier_threshold_ms;    // 0: above P99
    std::int64_t large_copy_bytes;  // copies worth naming as causes
  };
  Jitter(const Options& options, const Names& names, const GpuIdle& gpu, const CpuState& cpu)
      : options_(options), names_(names), gpu_(gpu), cpu_(cpu) {}

  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const JitterResult& result() const { return result_; }
  // The name of the range it explains, or null; valid after Names::finish(). It is --latency's
  // (options), else the steps (ProfilerStep), else the program's own requests: the heaviest range
  // of an application category (app, python, user0..user7) repeated at least 20 times at the top
  // level of its thread (not nested in another range), off compile workers' threads, else, in a
  // program with none, the heaviest module forward so repeated (category torch, a module range's
  // name). Never torch's other ranges (operators, data loading) nor compile, gc, alloc or cuda
  // ranges unless named. `why`, when given, says why this one (or why none).
  const NameStats* target(std::string* why = nullptr) const;
  // Whether ranges of `category` are the program's own (app, python, step, user0..user7).
  static bool program_category(Category category);
  // Whether a range's name is a module range's (a dotted identifier: "ResNet.layer1").
  static bool module_range_name(std::string_view name);

  // The causes it looks for in the trace, and their names ("gc pause", ...).
  enum Cause { kGc, kCompile, kAllocator, kSync, kLargeCopy, kCauses };
  static const char* cause_name(int cause);
  // The events of one cause, merged and sorted; valid after finish().
  const std::vector<Interval>& causes(int cause) const { return causes_[cause]; }

 private:
  const Options options_;
  const Names& names_;
  const GpuIdle& gpu_;
  const CpuState& cpu_;
  std::vector<Interval> causes_[kCauses];
  // The compiles, by the name that carries their id, and the recompiles' reasons by compile id:
  // what an outlier's compile was, and why it happened.
  struct NamedSpan {
    Interval span;
    std::string name;
  };
  static constexpr std::size_t kMaxCompiles = 100'000;
  std::vector<NamedSpan> compiles_, gc_pauses_;
  std::unordered_map<std::string, std::string> recompile_reasons_;
  std::string compile_detail(std::int64_t begin, std::int64_t end) const;
  // The GC pauses within [begin, end) by name ("gc gen2 x1"), counted into `all` too.
  std::string gc_detail(std::int64_t begin, std::int64_t end,
                        std::map<std::string, std::uint64_t>* all) const;
  JitterResult result_;
};

}  // namespace gpuprobe::analysis
