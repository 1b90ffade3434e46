// `gpuprobe report`: what a trace says about where time went and why latency jittered. A Sink,
// so it reads any trace format in one streaming pass, feeding each event to the analyses of this
// folder (analysis.h) — names and self time, GPU idle, kernel bounds, latency, jitter, compile —
// and the verdict, a function of their results. Each keeps what it needs in bounded memory
// (per-name statistics, the slowest instances, the intervals that can explain an outlier, GPU
// work per stream), so memory grows with what is kept, not with the file.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/report_options.h"
#include "analysis/report_result.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::analysis {

class TraceReport : public Sink {
 public:
  explicit TraceReport(ReportOptions options = {});
  TraceReport(const TraceReport&) = delete;  // its analyses point at each other
  TraceReport& operator=(const TraceReport&) = delete;

  Status open(const TraceInfo& info) override;
  // Devices and the rank a reader learned only at the end of its input (a Perfetto trace
  // states them after its first events).
  void update_info(const TraceInfo& info) override {
    if (info_.devices.empty()) info_.devices = info.devices;
    adopt_rank(info_, info);
  }
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // Valid after close(), while this report lives: its name rows point into the report.
  const ReportResult& result() const { return result_; }
  // The report as JSON (docs/report.md), every analysis writing its own section, and the
  // sections as the text says them ("sections", report_sections.h); indented by `indent` spaces
  // a level, or on one line with -1.
  std::string json(int indent = 1) const;

 private:
  const ReportOptions options_;
  TraceInfo info_;
  Stats stats_;
  TraceContext context_;
  Names names_;
  GpuIdle gpu_;
  GpuBreakdown breakdown_;
  KernelBounds bounds_;
  Latency latency_;
  CpuState cpu_;  // before jitter_, which asks it about each outlier
  Jitter jitter_;
  Compile compile_;
  DataLoading data_;
  Memory memory_;      // after jitter_: it reads the outliers
  Timeline timeline_;  // after jitter_: its target and causes; only with options_.timeline
  // Those that stand alone (report_sections.cc), after the others: they read none of them.
  std::vector<std::unique_ptr<Analysis>> standalone_;
  // In the order they finish: each reads the results of those before it.
  std::vector<Analysis*> analyses_ = {&names_, &gpu_,    &breakdown_, &bounds_, &latency_,
                                      &cpu_,   &jitter_, &compile_,   &data_,   &memory_};
  std::uint64_t events_ = 0;
  std::int64_t first_ns_ = INT64_MAX, last_ns_ = INT64_MIN;
  ReportResult result_;
};

}  // namespace gpuprobe::analysis
