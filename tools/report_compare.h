// `gpuprobe diff A B` and `gpuprobe report DIR` (several ranks): reports side by side.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "report/trace_report.h"

namespace gpuprobe::tools {

// Per kernel and per range name: calls and total time in A and B, and the change, largest first;
// as text, JSON (docs/report.md) and HTML.
void print_diff(const report::ReportResult& a, const report::ReportResult& b, std::size_t limit,
                std::FILE* out);
std::string diff_json(const report::ReportResult& a, const report::ReportResult& b);
std::string diff_html(const report::ReportResult& a, const report::ReportResult& b,
                      std::size_t limit);

struct RankReport {
  std::string file;
  std::shared_ptr<report::TraceReport> report;  // owns what its result() points to
};

// One rank's summary. Times are per step (ProfilerStep) when the trace has steps, else for the
// whole trace. Collectives are GPU communication kernels (NCCL) when the trace has them, else the
// CPU ranges named like collectives ("nccl:all_reduce", "gloo:all_reduce", ...). A rank that
// computes longer makes the others wait inside collectives, so with synchronous collectives all
// ranks' steps take equally long and the straggler is the one with the most time outside them.
struct RankRow {
  std::string file;
  int rank = -1;
  double duration_ms = 0;
  std::uint64_t steps = 0;
  double step_ms = 0;        // mean step, or the whole trace
  double collective_ms = 0;  // in collectives
  double work_ms = 0;        // step_ms - collective_ms
  double gpu_busy_percent = 0;
  std::string top_cause;  // of the jitter outliers, "" when none
  bool straggler = false;
  std::string why;  // for a straggler: which time exceeds the others' median, by how much
};
// Rows in `ranks`' order; a straggler's step or work time exceeds `straggler_ratio` times the
// median of the other ranks'.
std::vector<RankRow> rank_rows(const std::vector<RankReport>& ranks, double straggler_ratio);

// The rows as text, JSON (docs/report.md) and HTML.
void print_ranks(const std::vector<RankRow>& rows, std::FILE* out);
std::string ranks_json(const std::vector<RankRow>& rows);
std::string ranks_html(const std::vector<RankRow>& rows);

}  // namespace gpuprobe::tools
