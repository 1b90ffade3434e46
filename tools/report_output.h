// `gpuprobe report` for people: terminal tables, and an HTML page (its JSON form is
// analysis::TraceReport::json()).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "analysis/trace_report.h"

namespace gpuprobe::tools {

using analysis::ms;

using analysis::TextOptions;

// The report as the terminal shows it: every section of analysis/report_sections.h, in order.
void print_report(const analysis::ReportResult& r, const TextOptions& options, std::FILE* out);

}  // namespace gpuprobe::tools

namespace gpuprobe::tools {

// The report page (report_html.cc): one self-contained file that opens with no network — the
// incident over time (latency with rolling P50/P99, GPU busy per device, cause marks; zoom and
// hover), the outliers with their explanation trees, kernel time, ranges, compiles, then the
// tables. `report_json` is TraceReport::json() of a report with ReportOptions::timeline.
std::string report_html(const analysis::ReportResult& r, const std::string& report_json,
                        const TextOptions& options);
// Whether this build can write it: it inlines Debian's libjs-dygraphs, found at build time.
bool report_page_available();

}  // namespace gpuprobe::tools
