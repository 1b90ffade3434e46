// JAX's compiles, from gpuprobe.jax.watch_compile()'s marks (formats/framework_events.h): a
// range per phase of each compile ("jax <phase>: <function>": trace, lower, backend compile, and
// cache load for a backend compile the persistent cache answered) and an instant per cache
// answer. Counted apart from torch.compile's (compile.h's is_other_compile).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "analysis/analysis.h"

namespace gpuprobe::analysis {

struct JaxCompileResult {
  // Backend compiles, those the persistent cache answered (loads), and the cache's answers.
  std::uint64_t compiles = 0, loads = 0, cache_hits = 0, cache_misses = 0;
  std::map<std::string, double> phase_seconds;  // trace, lower, backend compile, cache load
};

class JaxCompile : public Analysis {
 public:
  void add(const ReportEvent& event) override;
  void finish(const TraceContext&) override {}
  // Writes compile.jax (after Compile has written the rest of compile).
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const JaxCompileResult& result() const { return result_; }
  // The report's JAX section: compiles, their time by phase, the persistent cache's answers;
  // empty without any.
  Section describe(const TextOptions& options) const;

 private:
  JaxCompileResult result_;
};

}  // namespace gpuprobe::analysis
