// `gpuprobe diff A B` and `gpuprobe report DIR` (several ranks): reports side by side.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "report/trace_report.h"

namespace gpuprobe::tools {

// Per kernel and per range name: calls and total time in A and B, and the change, largest first.
void print_diff(const report::ReportResult& a, const report::ReportResult& b, std::size_t limit,
                std::FILE* out);
std::string diff_json(const report::ReportResult& a, const report::ReportResult& b);

// One row per rank (file): duration, steps and their mean, GPU busy, top cause; ranks whose mean
// step (or, without steps, whole trace) is more than `straggler_ratio` times the median flagged.
struct RankReport {
  std::string file;
  std::shared_ptr<report::TraceReport> report;  // owns what its result() points to
};
void print_ranks(const std::vector<RankReport>& ranks, double straggler_ratio, std::FILE* out);
std::string ranks_json(const std::vector<RankReport>& ranks, double straggler_ratio);

}  // namespace gpuprobe::tools
