// What `gpuprobe report` found: each analysis's result and the trace's own figures, filled by
// TraceReport (trace_report.h) when the trace ends; what the verdict, the sections
// (report_sections.h) and the tools read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.h"

#include "analysis/compile.h"
#include "analysis/data_loading.h"
#include "analysis/gpu_breakdown.h"
#include "analysis/gpu_idle.h"
#include "analysis/jitter.h"
#include "analysis/kernel_bounds.h"
#include "analysis/latency.h"
#include "analysis/memory.h"
#include "analysis/names.h"
#include "analysis/timeline.h"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::analysis {

// Everything the report shows: each analysis's result, and the trace's own figures.
struct ReportResult {
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint64_t events = 0;
  std::uint64_t dropped = 0, gpu_dropped = 0;  // lost while recording
  std::uint64_t names_overflowed = 0;          // names past the recorder's or the reader's caps
  int rank = -1;                               // the trace's distributed rank, when it says
  std::vector<DeviceInfo> devices;
  NamesResult names;
  GpuIdleResult gpu;
  GpuBreakdownResult breakdown;  // per device: compute, non-compute, idle; memsets
  KernelBoundsResult bounds;
  std::vector<LatencyRow> latency;
  JitterResult jitter;
  CompileResult compile;
  DataLoadingResult data;
  MemoryResult memory;
  TimelineResult timeline;  // with ReportOptions::timeline
  std::string verdict;      // what bounds the program, in a sentence
  // The analyses that stand alone (report_sections.cc's standalone<T>() entries: JAX's and
  // Triton's compiles, ...), owned by the TraceReport that made this result.
  std::vector<const Analysis*> standalone;

  // The standalone analysis of type T, nullptr when this result has none.
  template <class T>
  const T* find() const {
    for (const Analysis* analysis : standalone)
      if (const T* found = dynamic_cast<const T*>(analysis)) return found;
    return nullptr;
  }
};

}  // namespace gpuprobe::analysis
