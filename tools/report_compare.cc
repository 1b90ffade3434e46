#include "tools/report_compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

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

double mean_step_ms(const report::ReportResult& r, bool* has_steps) {
  for (const report::NameStats* s : r.ranges) {
    if (s->name == "ProfilerStep") {
      *has_steps = true;
      return static_cast<double>(s->total_ns) * 1e-6 / static_cast<double>(s->count);
    }
  }
  *has_steps = false;
  return static_cast<double>(r.end_ns - r.start_ns) * 1e-6;
}

double busiest(const report::ReportResult& r) {
  double b = 0;
  for (const auto& [d, busy] : r.device_busy_percent) b = std::max(b, busy);
  return b;
}

std::vector<bool> stragglers(const std::vector<RankReport>& ranks, double ratio) {
  std::vector<double> times;
  for (const RankReport& rr : ranks) {
    bool steps;
    times.push_back(mean_step_ms(rr.report->result(), &steps));
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  std::vector<bool> flags;
  for (const double t : times) flags.push_back(ranks.size() > 1 && t > ratio * median);
  return flags;
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
  return nlohmann::json{{"schema", "gpuprobe.diff/1"}, {"rows", rows}}.dump(1);
}

void print_ranks(const std::vector<RankReport>& ranks, double ratio, std::FILE* o) {
  const std::vector<bool> flags = stragglers(ranks, ratio);
  std::fprintf(o, "%zu ranks\n  %-6s %-36s %12s %7s %12s %8s  %s\n", ranks.size(), "rank", "file",
               "duration ms", "steps", "step ms", "GPU %", "top jitter cause");
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const report::ReportResult& r = ranks[i].report->result();
    bool has_steps;
    const double step = mean_step_ms(r, &has_steps);
    std::uint64_t steps = 0;
    for (const report::NameStats* s : r.ranges) {
      if (s->name == "ProfilerStep") steps = s->count;
    }
    std::string file = ranks[i].file;
    if (file.size() > 36) file = "..." + file.substr(file.size() - 33);
    std::fprintf(o, "  %-6s %-36s %12.3f %7llu %12.3f %7.1f%%  %s%s\n",
                 r.rank >= 0 ? std::to_string(r.rank).c_str() : "?", file.c_str(),
                 static_cast<double>(r.end_ns - r.start_ns) * 1e-6,
                 static_cast<unsigned long long>(steps), has_steps ? step : 0.0, busiest(r),
                 r.cause_summary.empty() ? "-" : r.cause_summary[0].cause.c_str(),
                 flags[i] ? "   <-- straggler" : "");
  }
}

std::string ranks_json(const std::vector<RankReport>& ranks, double ratio) {
  const std::vector<bool> flags = stragglers(ranks, ratio);
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    bool has_steps;
    const double step = mean_step_ms(ranks[i].report->result(), &has_steps);
    rows.push_back({{"file", ranks[i].file},
                    {"rank", ranks[i].report->result().rank},
                    {"duration_ms", static_cast<double>(ranks[i].report->result().end_ns -
                                                        ranks[i].report->result().start_ns) *
                                        1e-6},
                    {"mean_step_ms", has_steps ? step : 0.0},
                    {"gpu_busy_percent", busiest(ranks[i].report->result())},
                    {"straggler", static_cast<bool>(flags[i])}});
  }
  return nlohmann::json{{"schema", "gpuprobe.ranks/1"}, {"ranks", rows}}.dump(1);
}

}  // namespace gpuprobe::tools
