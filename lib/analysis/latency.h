// Latency percentiles of every CPU range name: P50, P90, P99, P99.9 and the maximum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/names.h"

namespace gpuprobe::analysis {

struct LatencyRow {
  std::string name;
  std::uint64_t count = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
};

// The report's "latency by range name" table: P50, P90, P99, P99.9 and max of each range name.
Section describe_latency(const std::vector<LatencyRow>& rows, const TextOptions& options);

class Latency : public Analysis {
 public:
  explicit Latency(const Names& names) : names_(names) {}

  void add(const ReportEvent&) override {}  // reads the names' histograms at the end
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  // By total time, as the names' ranges.
  const std::vector<LatencyRow>& result() const { return rows_; }

 private:
  const Names& names_;
  std::vector<LatencyRow> rows_;
};

}  // namespace gpuprobe::analysis
