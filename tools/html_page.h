// Pieces of the self-contained HTML pages of `gpuprobe diff` and `report DIR` (inline CSS and
// SVG, no script, nothing fetched): the page frame, text escaping and their bar plot. The report
// page of one trace draws with a chart library instead (report_html.cc).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::tools::html {

std::string escape(const std::string& s);
// `v` formatted by printf's `format` (one double).
std::string fmt(const char* format, double v);

// The page up to and including its <h1>, and the end of the page.
std::string page_begin(const std::string& title);
std::string page_end();

// Horizontal bars, one row per (label, value) in the given order; negative values grow left of
// a zero line (class "bar neg").
std::string rows(const std::vector<std::pair<std::string, double>>& items, const char* unit);

// What `print` writes (a terminal table), as a preformatted block under a heading.
std::string preformatted(const std::string& heading, const std::function<void(std::FILE*)>& print);

}  // namespace gpuprobe::tools::html
