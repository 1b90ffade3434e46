#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/report_output.h"

namespace gpuprobe::tools {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string fmt(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

constexpr int kWidth = 720, kHeight = 220, kLeft = 50, kBottom = 30;

// Vertical bars over `values` (one per slot), y from 0 to `top`, with an x-axis caption.
std::string columns(const std::vector<double>& values, double top, const std::string& caption,
                    const std::vector<std::pair<double, std::string>>& markers = {}) {
  std::string svg = "<svg class=\"plot\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(kHeight) + "\" xmlns=\"http://www.w3.org/2000/svg\">";
  const double w =
      static_cast<double>(kWidth - kLeft - 10) / std::max<std::size_t>(values.size(), 1);
  const double h = kHeight - kBottom - 10;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double bar = top > 0 ? values[i] / top * h : 0;
    svg += "<rect class=\"bar\" x=\"" + fmt("%.1f", kLeft + static_cast<double>(i) * w) +
           "\" y=\"" + fmt("%.1f", 10 + h - bar) + "\" width=\"" +
           fmt("%.1f", std::max(w - 1, 1.0)) + "\" height=\"" + fmt("%.1f", bar) + "\"/>";
  }
  for (std::size_t m = 0; m < markers.size(); ++m) {
    const double x = kLeft + markers[m].first * w;
    svg += "<line class=\"marker\" x1=\"" + fmt("%.1f", x) + "\" x2=\"" + fmt("%.1f", x) +
           "\" y1=\"10\" y2=\"" + fmt("%.1f", 10 + h) + "\"/><text x=\"" + fmt("%.1f", x + 3) +
           "\" y=\"" + std::to_string(22 + 14 * static_cast<int>(m)) + "\">" +
           escape(markers[m].second) + "</text>";
  }
  svg += "<line class=\"axis\" x1=\"" + std::to_string(kLeft) + "\" x2=\"" +
         std::to_string(kWidth - 10) + "\" y1=\"" + fmt("%.1f", 10 + h) + "\" y2=\"" +
         fmt("%.1f", 10 + h) + "\"/>";
  svg += "<text x=\"4\" y=\"18\">" + escape(fmt("%.3g", top)) + "</text>";
  svg += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kHeight - 8) + "\">" +
         escape(caption) + "</text></svg>";
  return svg;
}

// Horizontal bars: one row per (label, value), longest first.
std::string rows(const std::vector<std::pair<std::string, double>>& items, const char* unit) {
  const int row = 22;
  const int height = static_cast<int>(items.size()) * row + 10;
  std::string svg = "<svg class=\"plot\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(height) + "\" xmlns=\"http://www.w3.org/2000/svg\">";
  double top = 0;
  for (const auto& [label, v] : items) top = std::max(top, v);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double len =
        top > 0 ? items[i].second / top * (kWidth - 300 - 110) : 0;  // room for the value
    const std::string y = std::to_string(5 + static_cast<int>(i) * row);
    std::string label = items[i].first;
    if (label.size() > 38) label = label.substr(0, 35) + "...";
    svg += "<text x=\"4\" y=\"" + std::to_string(19 + static_cast<int>(i) * row) + "\">" +
           escape(label) + "</text><rect class=\"bar\" x=\"300\" y=\"" + y + "\" width=\"" +
           fmt("%.1f", std::max(len, 1.0)) + "\" height=\"16\"/><text x=\"" +
           fmt("%.1f", 305 + len) + "\" y=\"" + std::to_string(19 + static_cast<int>(i) * row) +
           "\">" + escape(fmt("%.3f", items[i].second)) + " " + unit + "</text>";
  }
  return svg + "</svg>";
}

}  // namespace

std::string report_html(const report::ReportResult& r, const TextOptions& options) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpuprobe "
      "report</title>"
      "<style>body{font:14px sans-serif;margin:24px;max-width:980px}"
      ".plot{border:1px solid #ccc;margin:6px 0 18px}.bar{fill:#4e79a7}.marker{stroke:#e15759;"
      "stroke-width:2}.axis{stroke:#333}text{font:11px sans-serif}pre{background:#f6f6f6;"
      "padding:8px;overflow-x:auto}</style></head><body>\n<h1>gpuprobe report</h1>\n";
  html += "<p class=\"verdict\"><b>" + escape(r.verdict) + "</b></p>\n";
  html += "<p>" + fmt("%.3f", static_cast<double>(r.end_ns - r.start_ns) * 1e-6) + " ms, " +
          std::to_string(r.events) +
          " events; dropped while recording: " + std::to_string(r.dropped) + " events, " +
          std::to_string(r.gpu_dropped) + " GPU records.</p>\n";
  if (!r.gpu_busy_timeline.empty()) {
    html += "<h2 id=\"gpu-busy\">GPU busy over time</h2>\n" +
            columns(r.gpu_busy_timeline, 100.0, "share of each 1% of the trace with GPU work, %") +
            "\n";
  }
  if (!r.kernels.empty()) {
    std::vector<std::pair<std::string, double>> items;
    for (std::size_t i = 0; i < r.kernels.size() && i < options.limit; ++i)
      items.emplace_back(r.kernels[i]->name, static_cast<double>(r.kernels[i]->total_ns) * 1e-6);
    html += "<h2 id=\"kernels\">GPU kernel time</h2>\n" + rows(items, "ms") + "\n";
  }
  if (!r.latency_histogram.empty()) {
    std::vector<double> counts;
    std::vector<std::pair<double, std::string>> markers;
    for (std::size_t i = 0; i < r.latency_histogram.size(); ++i) {
      counts.push_back(static_cast<double>(r.latency_histogram[i].second));
      const double lower = i == 0 ? 0 : r.latency_histogram[i - 1].first;
      for (const auto& [q, v] :
           {std::make_pair("P50", r.latency_p50_ms), std::make_pair("P99", r.latency_p99_ms)}) {
        if (v > lower && v <= r.latency_histogram[i].first)
          markers.emplace_back(static_cast<double>(i) + 0.5,
                               std::string(q) + " " + fmt("%.3f", v) + " ms");
      }
    }
    const double top = *std::max_element(counts.begin(), counts.end());
    html += "<h2 id=\"latency\">Latency of \"" + escape(r.latency_name) + "\"</h2>\n" +
            columns(counts, top,
                    "duration, " + fmt("%.3f", r.latency_histogram.front().first) + " to " +
                        fmt("%.3f", r.latency_histogram.back().first) + " ms (log scale); count",
                    markers) +
            "\n";
  }
  if (!r.cause_summary.empty()) {
    std::vector<std::pair<std::string, double>> items;
    for (const report::CauseOverlap& c : r.cause_summary)
      items.emplace_back(c.cause, static_cast<double>(c.overlap_ns) * 1e-6);
    html += "<h2 id=\"jitter\">What overlapped the " + std::to_string(r.outliers.size()) +
            " outliers above " + fmt("%.3f", r.outlier_threshold_ms) + " ms</h2>\n" +
            rows(items, "ms") + "\n";
  }
  // The same tables as the terminal, verbatim.
  std::FILE* mem = std::tmpfile();
  if (mem != nullptr) {
    print_report(r, options, mem);
    std::rewind(mem);
    std::string text;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, mem)) > 0) text.append(buf, n);
    std::fclose(mem);
    html += "<h2>Tables</h2>\n<pre>" + escape(text) + "</pre>\n";
  }
  return html + "</body></html>\n";
}

}  // namespace gpuprobe::tools
