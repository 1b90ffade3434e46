#include "analysis/range_outliers.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/outlier_children.h"

namespace gpuprobe::analysis {

RangeOutliers range_outliers(const Names& names, const NameStats& range, const Jitter& jitter,
                             const TraceContext& trace) {
  RangeOutliers r;
  if (range.count == 0) return r;
  std::vector<NameStats::Instance> slow = range.slowest;
  std::sort(slow.begin(), slow.end(),
            [](const auto& a, const auto& b) { return a.end - a.begin > b.end - b.begin; });
  // The P99 exactly when the slowest kept include its rank, else from the histogram.
  const std::size_t p99_from_top =
      range.count - static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(range.count)));
  std::int64_t threshold = static_cast<std::int64_t>(range.quantile_ns(0.99));
  if (p99_from_top < slow.size()) threshold = slow[p99_from_top].end - slow[p99_from_top].begin;
  r.threshold_ms = ms(threshold);
  const auto median = static_cast<std::int64_t>(range.quantile_ns(0.5));
  const std::vector<ThreadInfo>& threads = trace.stats->threads;
  for (const auto& inst : slow) {
    if (inst.end - inst.begin <= threshold) break;
    Outlier o;
    o.begin_ns = inst.begin;
    o.duration_ns = inst.end - inst.begin;
    o.excess_ns = std::max<std::int64_t>(o.duration_ns - median, 0);
    o.thread = inst.thread < threads.size() ? threads[inst.thread].name : "";
    o.os_tid = inst.thread < threads.size() ? threads[inst.thread].os_tid : 0;
    o.children = deviating_children(names, &range, inst.thread, inst.begin, inst.end, o.excess_ns);
    for (int c = 0; c < Jitter::kCauses; ++c) {
      const auto [covered, n] = overlap(jitter.causes(c), inst.begin, inst.end);
      if (n != 0) o.causes.push_back({Jitter::cause_name(c), covered, n, 0, {}});
    }
    std::sort(o.causes.begin(), o.causes.end(), [](const CauseOverlap& a, const CauseOverlap& b) {
      return a.overlap_ns > b.overlap_ns;
    });
    r.outliers.push_back(std::move(o));
  }
  return r;
}

nlohmann::json outliers_json(const std::vector<Outlier>& outliers, const TraceContext& trace) {
  using nlohmann::json;
  json a = json::array();
  for (const Outlier& o : outliers) {
    json causes = json::array();
    for (const CauseOverlap& c : o.causes)
      causes.push_back(
          {{"cause", c.cause}, {"overlap_ms", ms(c.overlap_ns)}, {"events", c.events}});
    a.push_back({{"start_ms", ms(o.begin_ns - trace.start_ns)},
                 {"duration_ms", ms(o.duration_ns)},
                 {"excess_ms", ms(o.excess_ns)},
                 {"thread", o.thread},
                 {"causes", causes},
                 {"children", deviations_json(o.children, o.excess_ns, trace.start_ns)}});
  }
  return a;
}

}  // namespace gpuprobe::analysis
