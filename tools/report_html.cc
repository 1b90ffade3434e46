#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/html_page.h"
#include "tools/report_output.h"

namespace gpuprobe::tools {

using html::columns;
using html::escape;
using html::fmt;
using html::rows;

std::string report_html(const analysis::ReportResult& r, const TextOptions& options) {
  std::string html = html::page_begin("gpuprobe report");
  html += "<p class=\"verdict\"><b>" + escape(r.verdict) + "</b></p>\n";
  html += "<p>" + fmt("%.3f", static_cast<double>(r.end_ns - r.start_ns) * 1e-6) + " ms, " +
          std::to_string(r.events) +
          " events; dropped while recording: " + std::to_string(r.dropped) + " events, " +
          std::to_string(r.gpu_dropped) + " GPU records.</p>\n";
  if (!r.gpu.busy_timeline.empty()) {
    html += "<h2 id=\"gpu-busy\">GPU busy over time</h2>\n" +
            columns(r.gpu.busy_timeline, 100.0, "share of each 1% of the trace with GPU work, %") +
            "\n";
  }
  if (!r.names.kernels.empty()) {
    std::vector<std::pair<std::string, double>> items;
    for (std::size_t i = 0; i < r.names.kernels.size() && i < options.limit; ++i)
      items.emplace_back(r.names.kernels[i]->name,
                         static_cast<double>(r.names.kernels[i]->total_ns) * 1e-6);
    html += "<h2 id=\"kernels\">GPU kernel time</h2>\n" + rows(items, "ms") + "\n";
  }
  if (!r.jitter.latency_histogram.empty()) {
    std::vector<double> counts;
    std::vector<std::pair<double, std::string>> markers;
    for (std::size_t i = 0; i < r.jitter.latency_histogram.size(); ++i) {
      counts.push_back(static_cast<double>(r.jitter.latency_histogram[i].second));
      const double lower = i == 0 ? 0 : r.jitter.latency_histogram[i - 1].first;
      for (const auto& [q, v] : {std::make_pair("P50", r.jitter.latency_p50_ms),
                                 std::make_pair("P99", r.jitter.latency_p99_ms)}) {
        if (v > lower && v <= r.jitter.latency_histogram[i].first)
          markers.emplace_back(static_cast<double>(i) + 0.5,
                               std::string(q) + " " + fmt("%.3f", v) + " ms");
      }
    }
    const double top = *std::max_element(counts.begin(), counts.end());
    html +=
        "<h2 id=\"latency\">Latency of \"" + escape(r.jitter.latency_name) + "\"</h2>\n" +
        columns(counts, top,
                "duration, " + fmt("%.3f", r.jitter.latency_histogram.front().first) + " to " +
                    fmt("%.3f", r.jitter.latency_histogram.back().first) + " ms (log scale); count",
                markers) +
        "\n";
  }
  if (!r.jitter.cause_summary.empty()) {
    std::vector<std::pair<std::string, double>> items;
    for (const analysis::CauseOverlap& c : r.jitter.cause_summary)
      items.emplace_back(c.cause, static_cast<double>(c.overlap_ns) * 1e-6);
    html += "<h2 id=\"jitter\">What overlapped the " + std::to_string(r.jitter.outliers.size()) +
            " outliers above " + fmt("%.3f", r.jitter.outlier_threshold_ms) + " ms</h2>\n" +
            rows(items, "ms") + "\n";
  }
  // The same tables as the terminal, verbatim.
  html += html::preformatted("Tables", [&](std::FILE* f) { print_report(r, options, f); });
  return html + html::page_end();
}

}  // namespace gpuprobe::tools
