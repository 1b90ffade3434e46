#include "tools/report_compare.h"

#include <algorithm>

#include "tools/html_page.h"
#include "tools/report_output.h"

namespace gpuprobe::tools {

using analysis::DiffRow;
using analysis::RankRow;

void print_diff(const analysis::ReportResult& a, const analysis::ReportResult& b, std::size_t limit,
                std::FILE* o) {
  std::fprintf(
      o, "A: %.3f ms, %llu events; B: %.3f ms, %llu events\n",
      static_cast<double>(a.end_ns - a.start_ns) * 1e-6, static_cast<unsigned long long>(a.events),
      static_cast<double>(b.end_ns - b.start_ns) * 1e-6, static_cast<unsigned long long>(b.events));
  std::fprintf(o, "  %-7s %-40s %9s %9s %12s %12s %12s %8s\n", "kind", "name", "calls A", "calls B",
               "total A ms", "total B ms", "delta ms", "B/A");
  std::size_t n = 0;
  for (const DiffRow& r : analysis::diff_rows(a, b)) {
    if (n++ == limit) break;
    std::string name = r.name.size() > 40 ? r.name.substr(0, 37) + "..." : r.name;
    std::fprintf(
        o, "  %-7s %-40s %9llu %9llu %12.3f %12.3f %+12.3f %8s\n", r.kind.c_str(), name.c_str(),
        static_cast<unsigned long long>(r.calls_a), static_cast<unsigned long long>(r.calls_b),
        r.total_a_ms, r.total_b_ms, r.delta_ms(),
        r.total_a_ms > 0 ? (std::to_string(r.total_b_ms / r.total_a_ms).substr(0, 5) + "x").c_str()
                         : (r.total_b_ms > 0 ? "new" : "-"));
  }
}

void print_ranks(const std::vector<RankRow>& rows, std::FILE* o) {
  std::fprintf(o, "%zu ranks (times per step where the traces have steps)\n", rows.size());
  std::fprintf(o, "  %-6s %-32s %12s %7s %11s %14s %12s %7s  %s\n", "rank", "file", "duration ms",
               "steps", "step ms", "collective ms", "work ms", "GPU %", "top jitter cause");
  for (const RankRow& row : rows) {
    std::string file = row.file;
    if (file.size() > 32) file = "..." + file.substr(file.size() - 29);
    std::fprintf(o, "  %-6s %-32s %12.3f %7llu %11.3f %14.3f %12.3f %6.1f%%  %s\n",
                 row.rank >= 0 ? std::to_string(row.rank).c_str() : "?", file.c_str(),
                 row.duration_ms, static_cast<unsigned long long>(row.steps), row.step_ms,
                 row.collective_ms, row.work_ms, row.gpu_busy_percent,
                 row.top_cause.empty() ? "-" : row.top_cause.c_str());
  }
  for (const RankRow& row : rows) {
    if (row.straggler)
      std::fprintf(o, "  straggler: rank %d (%s): %s\n", row.rank, row.file.c_str(),
                   row.why.c_str());
  }
}

std::string ranks_html(const std::vector<RankRow>& rows) {
  std::vector<std::pair<std::string, double>> work, collective;
  std::string flagged;
  for (const RankRow& row : rows) {
    const std::string label =
        "rank " + std::to_string(row.rank) + (row.straggler ? " (straggler)" : "");
    work.emplace_back(label, row.work_ms);
    collective.emplace_back(label, row.collective_ms);
    if (row.straggler)
      flagged += "<li>rank " + std::to_string(row.rank) + ": " + html::escape(row.why) + "</li>";
  }
  std::string page = html::page_begin("gpuprobe: " + std::to_string(rows.size()) + " ranks");
  page +=
      flagged.empty() ? "<p>No straggler.</p>\n" : "<p>Stragglers:</p><ul>" + flagged + "</ul>\n";
  page += "<h2 id=\"work\">Time outside collectives</h2>\n" + html::rows(work, "ms") + "\n";
  const bool any_collective =
      std::any_of(rows.begin(), rows.end(), [](const RankRow& r) { return r.collective_ms > 0; });
  page += any_collective ? "<h2 id=\"collectives\">Time in collectives</h2>\n" +
                               html::rows(collective, "ms") + "\n"
                         : "<p>No collectives in these traces (NCCL kernels, or ranges named "
                           "like all_reduce).</p>\n";
  page += html::preformatted("Table", [&](std::FILE* f) { print_ranks(rows, f); });
  return page + html::page_end();
}

std::string diff_html(const analysis::ReportResult& a, const analysis::ReportResult& b,
                      std::size_t limit) {
  std::vector<std::pair<std::string, double>> deltas;
  for (const DiffRow& r : analysis::diff_rows(a, b)) {
    if (deltas.size() == limit) break;
    deltas.emplace_back(r.kind + " " + r.name, r.delta_ms());
  }
  std::string page = html::page_begin("gpuprobe diff");
  page += "<h2 id=\"deltas\">Change in total time, B - A (largest first)</h2>\n" +
          html::rows(deltas, "ms") + "\n";
  page += html::preformatted("Table", [&](std::FILE* f) { print_diff(a, b, limit, f); });
  return page + html::page_end();
}

}  // namespace gpuprobe::tools
