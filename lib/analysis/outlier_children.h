// An outlier explained top-down: the ranges inside it, on its thread, that took longer than
// their own name's median — each with its excess over that median and its share of the
// outlier's excess — and, inside each, the same again. A slow `process_batch` whose child
// `layer_1` took 12.1 ms against a median of 0.08 ms is explained by that child, and the child
// by its own children, where nothing else recorded overlaps it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/names.h"

namespace gpuprobe::analysis {

struct Deviation {
  std::string name;
  std::int64_t begin_ns = 0, duration_ns = 0, median_ns = 0;
  std::int64_t excess_ns = 0;  // duration - median
  std::vector<Deviation> children;
};

// The deviations inside [begin, end) on `thread` (the outlier's own name excluded at the top),
// largest excess first, at most `width` per level and `depth` levels; only those whose excess
// is at least 1 % of `excess_ns` and a tenth of their median. From the instances Names keeps
// (the slowest of each name), so a child that deviated is found when it is among its name's
// slowest.
std::vector<Deviation> deviating_children(const Names& names, const NameStats* outlier_name,
                                          std::uint32_t thread, std::int64_t begin,
                                          std::int64_t end, std::int64_t excess_ns,
                                          std::size_t width = 5, int depth = 4);

// `ds` as the report's JSON: each deviation's name, start (ms from `start`), duration, median,
// excess, its share of the outlier's `excess`, and its own children the same way.
nlohmann::json deviations_json(const std::vector<Deviation>& ds, std::int64_t excess,
                               std::int64_t start);

}  // namespace gpuprobe::analysis
