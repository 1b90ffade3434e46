#include "analysis/ranks.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/str_format.h"
#include "analysis/kernel_class.h"
#include "formats/steps.h"

namespace gpuprobe::analysis {
namespace {

// The median of `values` without values[skip] (the lower middle of an even count).
double median_of_others(const std::vector<double>& values, std::size_t skip) {
  std::vector<double> others;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != skip) others.push_back(values[i]);
  }
  std::sort(others.begin(), others.end());
  return others.empty() ? 0 : others[(others.size() - 1) / 2];
}

// A rank's time per step by (kind, name): kernels by their time, ranges by their self time (so
// that an outer range does not also count its children's). Steps and collectives left out.
using PerStep = std::map<std::pair<std::string, std::string>, double>;
PerStep per_step(const ReportResult& r, double steps) {
  PerStep out;
  for (const NameStats* s : r.names.kernels)
    if (kernel_class_from_name(s->name) != "communication")
      out[{"kernel", s->name}] += ms(s->total_ns) / steps;
  for (const NameStats* s : r.names.ranges)
    if (s->name != formats::kStepName && kernel_class_from_name(s->name) != "communication")
      out[{"range", s->name}] += ms(s->self_ns) / steps;
  return out;
}

// What in rank `i` exceeds the other ranks' median per step by the most.
void find_excess(const std::vector<PerStep>& all, std::size_t i, RankRow* row) {
  double best = 0;
  for (const auto& [key, mine] : all[i]) {
    std::vector<double> values;
    for (const PerStep& p : all) {
      auto it = p.find(key);
      values.push_back(it == p.end() ? 0 : it->second);
    }
    const double others = median_of_others(values, i);
    if (mine - others <= best) continue;
    best = mine - others;
    row->excess_kind = key.first;
    row->excess_name = key.second;
    row->excess_ms = mine;
    row->others_ms = others;
  }
}

}  // namespace

std::vector<RankRow> rank_rows(const std::vector<RankInput>& ranks, double ratio) {
  std::vector<RankRow> rows;
  std::vector<PerStep> per_steps;
  for (const RankInput& input : ranks) {
    const ReportResult& r = *input.report;
    RankRow row;
    row.file = input.file;
    row.rank = r.rank;
    row.duration_ms = ms(r.end_ns - r.start_ns);
    std::int64_t step_ns = r.end_ns - r.start_ns, cpu_collective_ns = 0;
    for (const NameStats* s : r.names.ranges) {
      if (s->name == formats::kStepName) {
        row.steps = s->count;
        step_ns = s->total_ns;
      }
      // Nested collective ranges ("nccl:all_reduce" around "c10d::allreduce_"): the outermost,
      // the one with the most time, counts.
      if (kernel_class_from_name(s->name) == "communication")
        cpu_collective_ns = std::max(cpu_collective_ns, s->total_ns);
    }
    const double per = row.steps > 0 ? static_cast<double>(row.steps) : 1.0;
    row.step_ms = ms(step_ns) / per;
    const std::int64_t gpu_collective_ns = r.bounds.communication_class_ns;
    row.collective_ms = ms(gpu_collective_ns > 0 ? gpu_collective_ns : cpu_collective_ns) / per;
    row.work_ms = std::max(row.step_ms - row.collective_ms, 0.0);
    row.gpu_busy_percent = r.gpu.busiest_percent();
    row.top_cause = r.jitter.cause_summary.empty() ? "" : r.jitter.cause_summary[0].cause;
    rows.push_back(row);
    per_steps.push_back(per_step(r, per));
  }
  std::vector<double> steps, work, collective;
  for (const RankRow& row : rows) {
    steps.push_back(row.step_ms);
    work.push_back(row.work_ms);
    collective.push_back(row.collective_ms);
  }
  for (std::size_t i = 0; rows.size() > 1 && i < rows.size(); ++i) {
    RankRow& row = rows[i];
    const double step_median = median_of_others(steps, i), work_median = median_of_others(work, i);
    if (step_median > 0 && row.step_ms > ratio * step_median) {
      row.why = absl::StrFormat("step %.3f ms, %.2fx the other ranks' median", row.step_ms,
                                row.step_ms / step_median);
    } else if (work_median > 0 && row.work_ms > ratio * work_median) {
      row.why = absl::StrFormat(
          "%.3f ms outside collectives, %.2fx the other ranks' median (they wait in "
          "collectives %.3f ms, this rank %.3f ms)",
          row.work_ms, row.work_ms / work_median, median_of_others(collective, i),
          row.collective_ms);
    } else {
      continue;
    }
    row.straggler = true;
    find_excess(per_steps, i, &row);
    if (!row.excess_name.empty())
      row.why += absl::StrFormat("; most of it: %s %s, %.3f ms per step against %.3f ms",
                                 row.excess_kind, row.excess_name, row.excess_ms, row.others_ms);
  }
  return rows;
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
                 {"why", row.why},
                 {"excess", row.excess_name.empty()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json{{"kind", row.excess_kind},
                                                 {"name", row.excess_name},
                                                 {"ms_per_step", row.excess_ms},
                                                 {"others_ms_per_step", row.others_ms}}}});
  }
  return nlohmann::json{{"schema", "gpuprobe.ranks/1"}, {"ranks", a}}.dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuprobe::analysis
