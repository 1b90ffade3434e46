// Two reports compared (`gpuprobe diff A B`): per kernel and per range name, calls and total time
// in A and in B, and the change, largest first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace_report.h"

namespace gpuprobe::analysis {

struct DiffRow {
  std::string kind, name;  // kind: "kernel" or "range"
  std::uint64_t calls_a = 0, calls_b = 0;
  double total_a_ms = 0, total_b_ms = 0;
  double delta_ms() const { return total_b_ms - total_a_ms; }
};

// By the size of the change, largest first (ties: kind, then name).
std::vector<DiffRow> diff_rows(const ReportResult& a, const ReportResult& b);

// The rows as JSON (docs/report.md: gpuprobe.diff/1).
std::string diff_json(const ReportResult& a, const ReportResult& b);

}  // namespace gpuprobe::analysis
