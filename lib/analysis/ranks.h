// Several ranks' reports side by side (`gpuprobe report DIR`): per rank, step time, time in
// collectives and outside them, GPU busy and the top jitter cause, and the straggler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace_report.h"

namespace gpuprobe::analysis {

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
  // For a straggler, what most of its extra time is: the kernel, or the range by its self time
  // (outside its child ranges), that exceeds the other ranks' median by the most per step.
  // Steps and collectives are not candidates. Empty when nothing exceeds.
  std::string excess_kind, excess_name;  // kind: "kernel" or "range"
  double excess_ms = 0, others_ms = 0;   // per step: this rank's, the others' median
};

struct RankInput {
  std::string file;
  const ReportResult* report;
};

// Rows in `ranks`' order; a straggler's step or work time exceeds `straggler_ratio` times the
// median of the other ranks', and its `why` ends with its excess when it has one.
std::vector<RankRow> rank_rows(const std::vector<RankInput>& ranks, double straggler_ratio);

// The rows as JSON (docs/report.md: gpuprobe.ranks/1).
std::string ranks_json(const std::vector<RankRow>& rows);

}  // namespace gpuprobe::analysis
