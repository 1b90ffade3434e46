// `gpuprobe report`'s two forms: terminal tables, and JSON (schema: docs/report.md).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "report/trace_report.h"

namespace gpuprobe::tools {

// Nanoseconds as milliseconds, the unit every report form prints.
inline double ms(std::int64_t ns) { return static_cast<double>(ns) * 1e-6; }

struct TextOptions {
  std::size_t limit = 15;      // rows per table
  std::string sort = "total";  // total, calls, mean, max, p99
};

void print_report(const report::ReportResult& r, const TextOptions& options, std::FILE* out);
std::string report_json(const report::ReportResult& r);

}  // namespace gpuprobe::tools

namespace gpuprobe::tools {

// One self-contained HTML page (inline CSS and SVG, no script, no network): the verdict, GPU
// busy over time, kernel time breakdown, the latency histogram with P50/P99 marked, and the
// jitter causes, then the tables.
std::string report_html(const report::ReportResult& r, const TextOptions& options);

}  // namespace gpuprobe::tools
