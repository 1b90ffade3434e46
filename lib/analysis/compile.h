// torch.compile's cost and behaviour, from gpuprobe.torch's compile ranges, marks and counters
// (or torch.profiler's Dynamo spans): compiles, recompiles and why, eager fallbacks, graph
// breaks, cache counts, and the compiled code's runs — for the amortised compile cost, the
// compiled share of the program, Amdahl's bound and the break-even run count.
#pragma once

#include <climits>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/intervals.h"

namespace gpuprobe::analysis {

// A compile range: gpuprobe.torch's (category compile) or torch.profiler's Dynamo span.
bool is_frame_compile(const CallSite& site);
// A compile of another compiler than torch.compile's, counted apart: a phase of a JAX compile
// (gpuprobe.jax, "jax <phase>: <function>") or a Triton JIT compile or cache load
// (gpuprobe.triton), category compile.
bool is_other_compile(const CallSite& site);

struct CompileResult {
  std::uint64_t compiles = 0;
  std::int64_t compile_ns = 0;          // T_compile: time inside compiles
  std::vector<std::string> recompiles;  // "compile id: reason"
  std::vector<std::string> fallbacks;   // "compile id: frame: error", frames run eagerly
  std::vector<std::string> limit_hits;  // Dynamo's recompile-limit warnings
  std::vector<std::string> restarts;    // "compile id: reason", analyses Dynamo began again
  std::map<std::string, std::uint64_t> graph_breaks;  // reason -> count
  // What graph breaks cost at run time, from gpuprobe.torch's "eager after graph break" ranges
  // (the eager code between a break's two graphs): returns to eager N_break, their time
  // T_overhead = N_break x T_fallback (T_fallback their mean), their median, and T_overhead's
  // share of the compiled code's time with it; derived at finish().
  struct BreakCost {
    std::uint64_t returns = 0;
    std::int64_t overhead_ns = 0, median_ns = 0;
    double fallback_ms = 0, share = 0;
  } break_cost;
  // Per cache layer ("FX graph", "AOTAutograd"), from gpuprobe.torch's structured-trace marks.
  struct CacheLayer {
    std::uint64_t hits = 0, misses = 0, bypasses = 0;
    struct Miss {
      std::string compile_id, what;  // what: the key components that changed, or why bypassed
    };
    std::vector<Miss> explained;
  };
  std::map<std::string, CacheLayer> cache_layers;
  // Each phase group's own time over all compiles (Dynamo, AOTAutograd, Inductor, code
  // generation, kernel compile), from gpuprobe.torch's counters; empty without them.
  std::map<std::string, double> phase_seconds;
  // The modules compiles generated: the compile, the source's path, its kernels, and the GPU
  // time of those kernels in this trace (by name: CUPTI names a Triton kernel as Inductor does;
  // kernel_runs counts their launches, none for CPU code); and how many times its graph ran,
  // where the trace tells that module's runs apart: every module from one compile, the first
  // its forward graph and the second its backward (Inductor writes them in that order), the
  // runs gpuprobe.torch records of each; -1 otherwise (several compiles' graphs share the runs).
  struct GeneratedModule {
    std::string compile_id, path;
    std::vector<std::string> kernels;
    std::int64_t kernel_gpu_ns = 0;
    std::uint64_t kernel_runs = 0;
    std::int64_t graph_runs = -1;
  };
  std::vector<GeneratedModule> generated;
  std::uint64_t steps = 0;  // for the amortised cost per step
  // The last values of gpuprobe.torch's compile counters; negative when absent.
  double cache_hits = -1, cache_misses = -1, graph_ops = -1, kernels_generated = -1;
  double speedup = -1;  // S = T_eager / T_compiled, from gpuprobe.torch.compare()
  // gpuprobe.torch.compare_modes(): per torch.compile mode, in the order compared, its values by
  // what they are ("compile seconds", "execute seconds", "speedup", ...; framework_events.h).
  struct ModeRow {
    std::string mode;
    std::map<std::string, double> values;
  };
  std::vector<ModeRow> modes;
  // Runs of compiled code (graph runs when the trace has them, else frames): m and T_execute,
  // and the time they are a share p of (the trace's outside compiles) for the Amdahl bound.
  std::uint64_t runs = 0;
  std::int64_t run_ns = 0, base_ns = 0;
  // When the last frame compile ended (wall-clock ns; 0 without one), and how much of the
  // program ran after it: the share of the compiled code's runs that began after it (of base_ns
  // after it, without runs). Near 1: compiles at start-up only, a warm-up; near 0: still
  // compiling at the end; negative when unknown.
  std::int64_t last_compile_end_ns = 0;
  double after_last_compile = -1;
  // Derived; negative when unknown. B = T_compile / m; p = T_execute / base; Amdahl's bound
  // 1 / (1 - p) on the gain from faster compiled code; the whole program's speedup over eager
  // (1 - p) + p S; and the runs n* = T_compile / ((T_execute / m) (S - 1)) after which the
  // compiles have paid for themselves.
  double amortised_ms = -1, share = -1, amdahl_bound = -1, program_speedup = -1,
         break_even_runs = -1;
};

// The report's compile sections: the frames that failed to compile and ran eagerly (said right
// after the verdict), torch.compile's (compiles, compiled code's share and Amdahl's bound,
// caches, phases, generated code, speedups, compare_modes()'s table, recompiles, limit hits,
// restarts, graph breaks and their run-time cost); each empty when the trace has none of it.
// JAX's and Triton's compiles are analyses of their own (jax_compile.h, triton_compile.h).
// `trace_ns`: the trace's span, what T_compile is a share of.
Section describe_eager_fallbacks(const CompileResult& c);
Section describe_torch_compile(const CompileResult& c, std::int64_t trace_ns);

class Compile : public Analysis {
 public:
  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const CompileResult& result() const { return result_; }

 private:
  void add_mark(const char* name);
  void add_generated_code(std::string_view mark);
  void add_profiler_compile_id(const char* name);
  void add_mode_value(std::string_view counter, double value);
  void attribute_graph_runs();

  // Runs of compiled code of one kind, nested or overlapping ones merged per thread as they come.
  struct Runs {
    std::unordered_map<std::uint32_t, Interval> open;  // per thread: the run being merged
    std::int64_t ns = 0;
    std::uint64_t count = 0;
    void add(std::uint32_t thread, std::int64_t begin, std::int64_t end);
    void flush();
  };
  Runs runs_[3];  // by NameStats::compiled_run
  // Runs of compiled code that began after the last compile seen so far, by kind: their starts
  // (a later compile drops those before its end), the oldest folded into a count past kMaxAfter.
  struct RunsAfter {
    static constexpr std::size_t kMaxAfter = 4096;
    std::deque<std::int64_t> begins;
    std::uint64_t folded = 0;
    std::int64_t folded_last = INT64_MIN;  // the latest start among the folded
    void add(std::int64_t begin);
    void compile_ended(std::int64_t end);
    std::uint64_t count() const { return folded + begins.size(); }
  };
  RunsAfter runs_after_[3];
  // Compiled-code ranges by NameStats::compiled_run, forward [0] and backward [1], unmerged:
  // each module's graph runs.
  std::uint64_t run_ranges_[3][2] = {};
  // Kernel name -> its module in result_.generated; and the GPU time of kernels by name, kept
  // until the end (a kernel may run before the mark of the compile that made it arrives).
  std::unordered_map<std::string, std::size_t> generated_kernels_;
  std::unordered_map<std::string, std::pair<std::int64_t, std::uint64_t>> kernel_time_;
  std::vector<std::int64_t> break_eager_ns_;  // each "eager after graph break", for the median
  CompileResult result_;
};

}  // namespace gpuprobe::analysis
