// The wait for data: gpuprobe.torch.instrument_dataloader()'s "dataloader next" ranges — how
// many batches, the wait per batch (P50, P99, max), and its share of the steps' time (of the
// trace's when it has no steps), which the verdict names when it dominates.
#pragma once

#include <cstdint>

#include "analysis/analysis.h"
#include "analysis/names.h"

namespace gpuprobe::analysis {

struct DataLoadingResult {
  std::uint64_t batches = 0;
  std::int64_t wait_ns = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  std::int64_t steps_ns = 0;  // the steps' time, when the trace has steps
  double share = 0;           // wait_ns over the steps' time, else the trace's span; at most 1
};

// The report's "data loading" line: batches, the wait for them and its share, per-batch P50, P99
// and max; empty without batches.
Section describe_data_loading(const DataLoadingResult& d);

class DataLoading : public Analysis {
 public:
  explicit DataLoading(const Names& names) : names_(names) {}

  void add(const ReportEvent&) override {}  // reads the names' statistics at the end
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const DataLoadingResult& result() const { return result_; }

 private:
  const Names& names_;
  DataLoadingResult result_;
};

}  // namespace gpuprobe::analysis
