#include "tools/report_compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "formats/steps.h"
#include "tools/html_page.h"
#include "tools/report_output.h"

namespace gpuprobe::tools {
namespace {

struct DiffRow {
  std::string kind, name;
  std::uint64_t calls_a = 0, calls_b = 0;
  double total_a_ms = 0, total_b_ms = 0;
  double delta_ms() const { return total_b_ms - total_a_ms; }
};

std::vector<DiffRow> diff_rows(const report::ReportResult& a, const report::ReportResult& b) {
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  const auto add = [&](const char* kind, const std::vector<const report::NameStats*>& names,
                       bool is_b) {
    for (const report::NameStats* s : names) {
      DiffRow& r = rows[{kind, s->name}];
      r.kind = kind;
      r.name = s->name;
      (is_b ? r.calls_b : r.calls_a) = s->count;
      (is_b ? r.total_b_ms : r.total_a_ms) = static_cast<double>(s->total_ns) * 1e-6;
    }
  };
  add("kernel", a.kernels, false);
  add("kernel", b.kernels, true);
  add("range", a.ranges, false);
  add("range", b.ranges, true);
  std::vector<DiffRow> out;
  for (auto& [key, r] : rows) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::fabs(x.delta_ms()) > std::fabs(y.delta_ms());
  });
  return out;
}

double busiest(const report::ReportResult& r) {
  double b = 0;
  for (const auto& [d, busy] : r.device_busy_percent) b = std::max(b, busy);
  return b;
}

// The median of `values` without values[skip] (the lower middle of an even count).
double median_of_others(const std::vector<double>& values, std::size_t skip) {
  std::vector<double> others;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != skip) others.push_back(values[i]);
  }
  std::sort(others.begin(), others.end());
  return others.empty() ? 0 : others[(others.size() - 1) / 2];
}

}  // namespace

void print_diff(const report::ReportResult& a, const report::ReportResult& b, std::size_t limit,
                std::FILE* o) {
  std::fprintf(
      o, "A: %.3f ms, %llu events; B: %.3f ms, %llu events\n",
      static_cast<double>(a.end_ns - a.start_ns) * 1e-6, static_cast<unsigned long long>(a.events),
      static_cast<double>(b.end_ns - b.start_ns) * 1e-6, static_cast<unsigned long long>(b.events));
  std::fprintf(o, "  %-7s %-40s %9s %9s %12s %12s %12s %8s\n", "kind", "name", "calls A", "calls B",
               "total A ms", "total B ms", "delta ms", "B/A");
  std::size_t n = 0;
  for (const DiffRow& r : diff_rows(a, b)) {
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

std::string diff_json(const report::ReportResult& a, const report::ReportResult& b) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DiffRow& r : diff_rows(a, b)) {
    rows.push_back({{"kind", r.kind},
                    {"name", r.name},
                    {"calls_a", r.calls_a},
                    {"calls_b", r.calls_b},
                    {"total_a_ms", r.total_a_ms},
                    {"total_b_ms", r.total_b_ms},
                    {"delta_ms", r.delta_ms()}});
  }
  return nlohmann::json{{"schema", "gpuprobe.diff/1"}, {"rows", rows}}.dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<RankRow> rank_rows(const std::vector<RankReport>& ranks, double ratio) {
  std::vector<RankRow> rows;
  for (const RankReport& rr : ranks) {
    const report::ReportResult& r = rr.report->result();
    RankRow row;
    row.file = rr.file;
    row.rank = r.rank;
    row.duration_ms = ms(r.end_ns - r.start_ns);
    std::int64_t step_ns = r.end_ns - r.start_ns, cpu_collective_ns = 0;
    for (const report::NameStats* s : r.ranges) {
      if (s->name == formats::kStepName) {
        row.steps = s->count;
        step_ns = s->total_ns;
      }
      // Nested collective ranges ("nccl:all_reduce" around "c10d::allreduce_"): the outermost,
      // the one with the most time, counts.
      if (report::kernel_class_from_name(s->name) == "communication")
        cpu_collective_ns = std::max(cpu_collective_ns, s->total_ns);
    }
    const double per = row.steps > 0 ? static_cast<double>(row.steps) : 1.0;
    row.step_ms = ms(step_ns) / per;
    row.collective_ms =
        ms(r.communication_class_ns > 0 ? r.communication_class_ns : cpu_collective_ns) / per;
    row.work_ms = std::max(row.step_ms - row.collective_ms, 0.0);
    row.gpu_busy_percent = busiest(r);
    row.top_cause = r.cause_summary.empty() ? "" : r.cause_summary[0].cause;
    rows.push_back(row);
  }
  std::vector<double> steps, work, collective;
  for (const RankRow& row : rows) {
    steps.push_back(row.step_ms);
    work.push_back(row.work_ms);
    collective.push_back(row.collective_ms);
  }
  char why[200];
  for (std::size_t i = 0; rows.size() > 1 && i < rows.size(); ++i) {
    RankRow& row = rows[i];
    const double step_median = median_of_others(steps, i), work_median = median_of_others(work, i);
    if (step_median > 0 && row.step_ms > ratio * step_median) {
      std::snprintf(why, sizeof why, "step %.3f ms, %.2fx the other ranks' median", row.step_ms,
                    row.step_ms / step_median);
    } else if (work_median > 0 && row.work_ms > ratio * work_median) {
      std::snprintf(why, sizeof why,
                    "%.3f ms outside collectives, %.2fx the other ranks' median (they wait in "
                    "collectives %.3f ms, this rank %.3f ms)",
                    row.work_ms, row.work_ms / work_median, median_of_others(collective, i),
                    row.collective_ms);
    } else {
      continue;
    }
    row.straggler = true;
    row.why = why;
  }
  return rows;
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

std::string ranks_json(const std::vector<RankRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const RankRow& row : rows) {
    a.push_back({{"file", row.file},
                 {"rank", row.rank},
                 {"duration_ms", row.duration_ms},
                 {"steps", row.steps},
                 {"mean_step_ms", row.step_ms},
                 {"collective_ms", row.collective_ms},
                 {"work_ms", row.work_ms},
                 {"gpu_busy_percent", row.gpu_busy_percent},
                 {"top_cause", row.top_cause},
                 {"straggler", row.straggler},
                 {"why", row.why}});
  }
  return nlohmann::json{{"schema", "gpuprobe.ranks/1"}, {"ranks", a}}.dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
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

std::string diff_html(const report::ReportResult& a, const report::ReportResult& b,
                      std::size_t limit) {
  std::vector<std::pair<std::string, double>> deltas;
  for (const DiffRow& r : diff_rows(a, b)) {
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
