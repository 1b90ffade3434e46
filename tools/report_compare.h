// `gpuprobe diff A B` and `gpuprobe report DIR` (several ranks) for people: text and HTML of the
// comparisons lib/analysis computes (diff.h, ranks.h), which also give their JSON.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/diff.h"
#include "analysis/ranks.h"

namespace gpuprobe::tools {

void print_diff(const analysis::ReportResult& a, const analysis::ReportResult& b, std::size_t limit,
                std::FILE* out);
std::string diff_html(const analysis::ReportResult& a, const analysis::ReportResult& b,
                      std::size_t limit);

void print_ranks(const std::vector<analysis::RankRow>& rows, std::FILE* out);
std::string ranks_html(const std::vector<analysis::RankRow>& rows);

}  // namespace gpuprobe::tools
