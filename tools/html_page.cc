#include "tools/html_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::tools::html {
namespace {

constexpr int kWidth = 720;

std::string svg_begin(int height) {
  return "<svg class=\"plot\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
         std::to_string(height) + "\" xmlns=\"http://www.w3.org/2000/svg\">";
}

}  // namespace

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

std::string page_begin(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         escape(title) +
         "</title>"
         "<style>body{font:14px sans-serif;margin:24px;max-width:980px}"
         ".plot{border:1px solid #ccc;margin:6px 0 "
         "18px}.bar{fill:#4e79a7}.neg{fill:#59a14f}.axis{"
         "stroke:#333}"
         "text{font:11px sans-serif}pre{background:#f6f6f6;padding:8px;overflow-x:auto}"
         "</style></head><body>\n<h1>" +
         escape(title) + "</h1>\n";
}

std::string page_end() { return "</body></html>\n"; }

std::string rows(const std::vector<std::pair<std::string, double>>& items, const char* unit) {
  const int row = 22, label_width = 300, value_room = 110;
  std::string svg = svg_begin(static_cast<int>(items.size()) * row + 10);
  double top = 0;
  bool negative = false;
  for (const auto& [label, v] : items) {
    top = std::max(top, std::fabs(v));
    negative = negative || v < 0;
  }
  // With negative values the zero line sits in the middle of the bar area.
  const double area = kWidth - label_width - value_room;
  const double zero = label_width + (negative ? area / 2 : 0);
  const double scale = top > 0 ? (negative ? area / 2 : area) / top : 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double v = items[i].second;
    const double len = std::max(std::fabs(v) * scale, 1.0);
    const double x = v < 0 ? zero - len : zero;
    const std::string y = std::to_string(5 + static_cast<int>(i) * row);
    const std::string baseline = std::to_string(19 + static_cast<int>(i) * row);
    std::string label = items[i].first;
    if (label.size() > 38) label = label.substr(0, 35) + "...";
    svg += "<text x=\"4\" y=\"" + baseline + "\">" + escape(label) + "</text><rect class=\"bar" +
           (v < 0 ? " neg" : "") + "\" x=\"" + fmt("%.1f", x) + "\" y=\"" + y + "\" width=\"" +
           fmt("%.1f", len) + "\" height=\"16\"/><text x=\"" +
           fmt("%.1f", (v < 0 ? zero : x + len) + 5) + "\" y=\"" + baseline + "\">" +
           escape(fmt("%.3f", v)) + " " + unit + "</text>";
  }
  return svg + "</svg>";
}

std::string preformatted(const std::string& heading, const std::function<void(std::FILE*)>& print) {
  std::FILE* mem = std::tmpfile();
  if (mem == nullptr) return "";
  print(mem);
  std::rewind(mem);
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, mem)) > 0) text.append(buf, n);
  std::fclose(mem);
  return "<h2>" + escape(heading) + "</h2>\n<pre>" + escape(text) + "</pre>\n";
}

}  // namespace gpuprobe::tools::html
