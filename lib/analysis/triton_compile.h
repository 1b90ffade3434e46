// Triton's JIT compiles of kernels, from gpuprobe.triton.watch_compile()'s marks
// (formats/framework_events.h): a range per real compile ("triton compile: <kernel>") or load
// from Triton's on-disk cache ("triton cache load: <kernel>"), and counters of each stage's
// time ("triton stage seconds: <stage>", totals). Counted apart from torch.compile's.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "analysis/analysis.h"

namespace gpuprobe::analysis {

struct TritonCompileResult {
  std::uint64_t compiles = 0, loads = 0;
  double compile_seconds = 0, load_seconds = 0;
  std::map<std::string, double> stage_seconds;  // ir, ttir, ttgir, llir, ptx, cubin, store
};

class TritonCompile : public Analysis {
 public:
  void add(const ReportEvent& event) override;
  void finish(const TraceContext&) override {}
  // Writes compile.triton (after Compile has written the rest of compile).
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const TritonCompileResult& result() const { return result_; }
  // The report's Triton section: compiles and loads, their time, each stage's; empty without any.
  Section describe(const TextOptions& options) const;

 private:
  TritonCompileResult result_;
};

}  // namespace gpuprobe::analysis
