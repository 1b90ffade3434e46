// The settings of `gpuprobe report`: thresholds the analyses use, the window of the trace they
// read, and how the tables are cut. One struct for every analysis (TraceReport hands it to those
// it builds); each field's flag is in tools/commands/report_command.cc.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "analysis/section.h"

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

}  // namespace gpuprobe::analysis
