#include "analysis/ranks.h"

#include <algorithm>
#include <nlohmann/json.hpp>

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

}  // namespace

std::vector<RankRow> rank_rows(const std::vector<RankInput>& ranks, double ratio) {
  std::vector<RankRow> rows;
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
                 {"why", row.why}});
  }
  return nlohmann::json{{"schema", "gpuprobe.ranks/1"}, {"ranks", a}}.dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuprobe::analysis
