// `gpuprobe report` for people: terminal tables, and an HTML page (its JSON form is
// analysis::TraceReport::json()).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "analysis/trace_report.h"

namespace gpuprobe::tools {

using analysis::ms;

struct TextOptions {
  std::size_t limit = 15;      // rows per table
  std::string sort = "total";  // total, calls, mean, max, p99
};

void print_report(const analysis::ReportResult& r, const TextOptions& options, std::FILE* out);

}  // namespace gpuprobe::tools

namespace gpuprobe::tools {

// One self-contained HTML page (inline CSS and SVG, no script, no network): the verdict, GPU
// busy over time, kernel time breakdown, the latency histogram with P50/P99 marked, and the
// jitter causes, then the tables.
std::string report_html(const analysis::ReportResult& r, const TextOptions& options);

}  // namespace gpuprobe::tools
