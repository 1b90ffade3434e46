// What torch.compile costs on every call after its compiles: each compiled call's dispatch,
// gpuprobe.torch.watch_compile()'s "dynamo guards: [<frame>] <function>" ranges (from
// torch.compile's wrapper turning Dynamo on to the call's first forward graph: Dynamo's cache
// lookup — its guards and the decision to recompile — and the frame's code before its graph),
// and torch.profiler's "TorchDynamo Cache Lookup" ranges (the cache lookup alone), by frame;
// against the requests (the latency range, jitter.h) and the compiled graphs' own runs.
// Dynamo's guards took 0.3-2.1 ms per call on vLLM's models (vLLM PR #11217).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.h"

namespace gpuprobe::analysis {

struct GuardsResult {
  struct Frame {
    std::string frame;  // "[0] forward"; torch.profiler's: "(cache lookup)"
    std::uint64_t calls = 0;
    std::int64_t total_ns = 0;
    double p50_ns = 0, p99_ns = 0;
    std::int64_t max_ns = 0;
  };
  std::vector<Frame> frames;  // the most time first
  std::uint64_t calls = 0;
  std::int64_t total_ns = 0;
  // The latency range (requests, steps) the trace's report explains: its instances and their
  // time, where there is one; guards' total against it is an aggregate share.
  std::string requests;
  std::uint64_t request_count = 0;
  std::int64_t request_ns = 0;
  // The compiled graphs' forward runs (gpuprobe's "compiled graph (forward)", torch.profiler's
  // "## Call CompiledFxGraph"): what the dispatch buys.
  std::uint64_t graph_runs = 0;
  std::int64_t graph_ns = 0;
};

class Guards : public Analysis {
 public:
  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const GuardsResult& result() const { return result_; }
  // The report's guards section: guard time per call and per request, and the frames with the
  // most; empty without any compiled call's dispatch recorded.
  Section describe(const TextOptions& options) const;

 private:
  std::vector<NameStats*> rows_;  // the names of guard ranges seen (bounded by the name table)
  GuardsResult result_;
};

}  // namespace gpuprobe::analysis
