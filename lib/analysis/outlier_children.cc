#include "analysis/outlier_children.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/analysis.h"

namespace gpuprobe::analysis {
namespace {

struct Candidate {
  const NameStats* name;
  std::int64_t begin, end, median;
};

// Nests `all` (sorted by begin, longer first at a tie) into a forest by containment, keeping
// the `width` largest excesses of each level down to `depth`.
std::vector<Deviation> nest(const std::vector<Candidate>& all, std::size_t from, std::size_t to,
                            std::size_t width, int depth) {
  std::vector<Deviation> level;
  for (std::size_t i = from; i < to;) {
    const Candidate& c = all[i];
    std::size_t inside = i + 1;
    while (inside < to && all[inside].begin < c.end) ++inside;
    Deviation d{c.name->name, c.begin, c.end - c.begin, c.median, c.end - c.begin - c.median, {}};
    if (depth > 1) d.children = nest(all, i + 1, inside, width, depth - 1);
    level.push_back(std::move(d));
    i = inside;
  }
  std::sort(level.begin(), level.end(),
            [](const Deviation& a, const Deviation& b) { return a.excess_ns > b.excess_ns; });
  if (level.size() > width) level.resize(width);
  return level;
}

}  // namespace

std::vector<Deviation> deviating_children(const Names& names, const NameStats* outlier_name,
                                          std::uint32_t thread, std::int64_t begin,
                                          std::int64_t end, std::int64_t excess_ns,
                                          std::size_t width, int depth) {
  std::vector<Candidate> all;
  for (const NameStats* s : names.result().ranges) {
    if (s->slowest.empty() || s->count < 2) continue;  // one instance: no median to deviate from
    const auto median = static_cast<std::int64_t>(s->quantile_ns(0.5));
    for (const NameStats::Instance& i : s->slowest) {
      if (i.thread != thread || i.begin < begin || i.end > end) continue;
      if (s == outlier_name && i.begin == begin && i.end == end) continue;  // the outlier itself
      const std::int64_t excess = i.end - i.begin - median;
      if (excess * 100 < excess_ns || excess * 10 < median || excess <= 0) continue;
      all.push_back({s, i.begin, i.end, median});
    }
  }
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  return nest(all, 0, all.size(), width, depth);
}

nlohmann::json deviations_json(const std::vector<Deviation>& ds, std::int64_t excess,
                               std::int64_t start) {
  nlohmann::json a = nlohmann::json::array();
  for (const Deviation& d : ds) {
    a.push_back(
        {{"name", d.name},
         {"start_ms", ms(d.begin_ns - start)},
         {"duration_ms", ms(d.duration_ns)},
         {"median_ms", ms(d.median_ns)},
         {"excess_ms", ms(d.excess_ns)},
         {"share_of_excess",
          excess > 0 ? static_cast<double>(d.excess_ns) / static_cast<double>(excess) : 0.0},
         {"children", deviations_json(d.children, excess, start)}});
  }
  return a;
}

}  // namespace gpuprobe::analysis
