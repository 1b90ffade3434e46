// `gpuprobe report`: what a trace says about where time went and why latency jittered. A Sink,
// so it reads any trace format in one streaming pass, feeding each event to the analyses of this
// folder (analysis.h) — names and self time, GPU idle, kernel bounds, latency, jitter, compile —
// and the verdict, a function of their results. Each keeps what it needs in bounded memory
// (per-name statistics, the slowest instances, the intervals that can explain an outlier, GPU
// work per stream), so memory grows with what is kept, not with the file.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/report_result.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::analysis {

struct ReportOptions {
  std::int64_t tiny_kernel_ns = 10'000;  // "tiny": shorter than this
  // Gaps shorter than this between queued work are kernel wait (launch overhead). HTA's
  // consecutive_kernel_delay defaults to 30 and is applied in the trace's time unit, which is
  // microseconds for Kineto's (and gpuprobe's) JSON: 30 us, so that the two agree.
  std::int64_t consecutive_kernel_ns = 30'000;
  std::int64_t large_copy_bytes = 1 << 20;  // copies worth naming as jitter causes
  std::string latency_name;                 // the range whose outliers are explained; "" = auto
  double outlier_threshold_ms = 0;          // 0: above P99
  std::size_t keep_slowest = 64;            // slowest instances kept per range name
  // Only events that start within [window_begin_ns, window_end_ns) (wall-clock ns), e.g. some
  // steps' span; the default takes everything.
  std::int64_t window_begin_ns = INT64_MIN, window_end_ns = INT64_MAX;
  // Outliers only among the instances that begin within [outliers_from_ns, outliers_to_ns), e.g.
  // the span a dump's trigger watched; everything else still counts, causes included.
  std::int64_t outliers_from_ns = INT64_MIN, outliers_to_ns = INT64_MAX;
  // Also the incident over time (timeline.h), for the report page.
  bool timeline = false;
  // The rows and order of the tables in the JSON's described sections (report_sections.h).
  TextOptions text;
};

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
  JaxCompile jax_;        // after compile_: each writes its key into compile's JSON
  TritonCompile triton_;  // after compile_, too
  DataLoading data_;
  Memory memory_;      // after jitter_: it reads the outliers
  Timeline timeline_;  // after jitter_: its target and causes; only with options_.timeline
  std::vector<Analysis*> analyses_ = {&names_,   &gpu_,    &breakdown_, &bounds_,
                                      &latency_, &cpu_,    &jitter_,    &compile_,
                                      &jax_,     &triton_, &data_,      &memory_};
  std::uint64_t events_ = 0;
  std::int64_t first_ns_ = INT64_MAX, last_ns_ = INT64_MIN;
  ReportResult result_;
};

}  // namespace gpuprobe::analysis
