// Per-name statistics of CPU ranges and kernels: calls, total, percentiles, self time (time on
// the range's own thread outside its recorded children) and the GPU time each range launched.
// The other analyses read its rows.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/intervals.h"
#include "analysis/name_stats.h"

namespace gpuprobe::analysis {

struct NamesResult {
  std::vector<const NameStats*> kernels, ranges;  // sorted by total time
  std::int64_t gpu_kernel_ns = 0;                 // all kernels' time
};

// The report's "GPU kernels" and "ranges" tables: each name's calls, total, mean, min, max, P50
// and P99, with the kernels' share of GPU time, or the ranges' self time and the GPU time they
// launched; sorted and cut as `options` say.
Section describe_kernels(const NamesResult& names, const TextOptions& options);
Section describe_ranges(const NamesResult& names, const TextOptions& options);

class Names : public Analysis {
 public:
  // Keeps the `keep_slowest` slowest instances of each name among those that begin within
  // [slowest_from_ns, slowest_to_ns) (a dump's trigger window); the statistics take them all.
  Names(std::size_t keep_slowest, std::int64_t slowest_from_ns, std::int64_t slowest_to_ns)
      : keep_slowest_(keep_slowest),
        slowest_from_ns_(slowest_from_ns),
        slowest_to_ns_(slowest_to_ns) {}

  // The row of `e`'s name: a kernel's, or a CPU range's (steps share one, formats::kStepName);
  // null for other events. Rows stay where they are while the analysis lives.
  NameStats* row(const Event& e);
  // A CPU range's row by name, or null.
  const NameStats* range(const std::string& name) const;

  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const NamesResult& result() const { return result_; }

 private:
  using Table = std::unordered_map<std::string, NameStats>;
  using Cache = std::unordered_map<const void*, NameStats*>;
  NameStats& stats_for(Table& table, Cache& cache, const char* name);

  // A thread's ranges whose self time is not known yet. Ranges reach the report either children
  // first (gpuprobe's rings write a range when it ends) or parents first (files sorted by start,
  // as Kineto's); both orders give exact self times.
  struct OpenRange {
    std::int64_t begin, end, child_ns;
    NameStats* stats;
    bool linked;        // already counted in a parent's child_ns
    NameStats* parent;  // that parent's name, when linked
  };
  struct ThreadNesting {
    std::vector<OpenRange> stack;  // a chain, each inside the one below it
    // Finished ranges no parent has claimed: a parent arriving after its children claims them.
    // Bounded: a parent with more direct children than this, children first, loses the oldest.
    struct Root {
      std::int64_t begin, end;
      NameStats* stats;
    };
    std::vector<Root> roots;
    // Per name and the name of its direct parent (null: none, at the top level), how many of
    // its ranges so far (a root a parent claims later moves to that parent's entry).
    struct PairHash {
      std::size_t operator()(const std::pair<NameStats*, NameStats*>& p) const {
        return std::hash<NameStats*>()(p.first) * 31 + std::hash<NameStats*>()(p.second);
      }
    };
    std::unordered_map<std::pair<NameStats*, NameStats*>, std::uint64_t, PairHash> parents;
    bool frame_compiles = false;  // a torch.compile frame compiled on this thread
    bool compile_phases = false;  // a compile's phases ran on it ("compile phase: ...")
  };
  static constexpr std::size_t kMaxRoots = 8192;
  // A parent range repeated fewer times than this wraps the run: its children count as top-level.
  static constexpr std::uint64_t kWrapperRepeats = 20;
  void add_range(std::uint32_t thread, NameStats& stats, std::int64_t begin, std::int64_t end);
  // Pops the top of `t`'s stack, whose children have all arrived, into its name's statistics.
  void retire_top(std::uint32_t thread, ThreadNesting& t);
  // Whether a thread compiles for torch.compile's workers: named so ("triton_compile_0", ...),
  // or running a compile's phases ("compile phase: compile_file") though no frame compiled on it.
  static bool compile_worker(const ThreadNesting& t, const std::string& thread_name);

  const std::size_t keep_slowest_;
  const std::int64_t slowest_from_ns_, slowest_to_ns_;
  Table kernel_names_, range_names_;
  // Names from one trace reader are stable pointers: found by pointer before by text.
  Cache kernel_cache_, range_cache_;
  std::unordered_map<std::uint32_t, ThreadNesting> nesting_;
  NamesResult result_;
};

}  // namespace gpuprobe::analysis
