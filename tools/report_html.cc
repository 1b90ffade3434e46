// `gpuprobe report --html`: one self-contained page — the chart library, the page's script and
// style inlined (cmake/GpuprobeAssets.cmake), the report's JSON as the data they draw, and the
// terminal's tables verbatim at the end. Nothing is fetched: it opens from a file, offline.
#include <cstdio>
#include <string>

#include "tools/html_page.h"
#include "tools/report_output.h"

#if GPUPROBE_REPORT_PAGE
namespace gpuprobe::tools::assets {
extern const char dygraph_js[], dygraph_css[], page_util_js[], page_sections_js[], page_js[],
    page_css[];
}  // namespace gpuprobe::tools::assets
#endif

namespace gpuprobe::tools {
namespace {

// An inlined file without its source-map comment: the page has no map beside it to load.
std::string without_source_map(std::string text) {
  for (const char* marker : {"//# sourceMappingURL=", "/*# sourceMappingURL="}) {
    const std::size_t at = text.rfind(marker);
    if (at != std::string::npos) text.erase(at);
  }
  return text;
}

// JSON safe inside <script>: '<' only occurs within its strings, where \u003c means the same.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (const char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool report_page_available() { return GPUPROBE_REPORT_PAGE != 0; }

std::string report_html(const analysis::ReportResult& r, const std::string& report_json,
                        const TextOptions& options) {
#if GPUPROBE_REPORT_PAGE
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\"><title>gpuprobe "
      "report</title>\n<style>" +
      without_source_map(assets::dygraph_css) + "</style>\n<style>" + assets::page_css +
      "</style>\n</head><body>\n<h1>gpuprobe report</h1>\n<p class=\"verdict\">" +
      html::escape(r.verdict) + "</p>\n<p class=\"summary\">" +
      html::fmt("%.3f", static_cast<double>(r.end_ns - r.start_ns) * 1e-6) + " ms, " +
      std::to_string(r.events) + " events; lost while recording: " + std::to_string(r.dropped) +
      " events, " + std::to_string(r.gpu_dropped) +
      " GPU records.</p>\n<noscript><p>The charts and tables above the text need "
      "JavaScript.</p></noscript>\n<div id=\"sections\"></div>\n";
  // The same tables as the terminal, verbatim, in a box that scrolls (page.css).
  page += html::preformatted("Tables", [&](std::FILE* f) { print_report(r, options, f); });
  page += "<script type=\"application/json\" id=\"report-data\">" + script_safe(report_json) +
          "</script>\n<script>" + without_source_map(assets::dygraph_js) + "</script>\n<script>" +
          assets::page_util_js + "</script>\n<script>" + assets::page_sections_js +
          "</script>\n<script>" + assets::page_js + "</script>\n</body></html>\n";
  return page;
#else
  (void)r;
  (void)report_json;
  (void)options;
  return "";
#endif
}

}  // namespace gpuprobe::tools
