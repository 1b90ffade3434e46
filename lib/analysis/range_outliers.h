// The outliers of any repeated range, for the report page's range chooser: the instances above
// the range's P99 (the jitter's rule), each with the recorded causes it overlapped (GC pauses,
// compiles, allocator calls, synchronizations, large copies) and the ranges inside it that
// deviated. The jitter explains one range more fully (GPU idle, CPU gap, the scheduler's
// split); this explains the others the page can switch to, from the same recorded causes.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/analysis.h"
#include "analysis/jitter.h"
#include "analysis/names.h"

namespace gpuprobe::analysis {

struct RangeOutliers {
  double threshold_ms = 0;        // the P99: outliers are strictly slower
  std::vector<Outlier> outliers;  // slowest first
};

// `range`'s outliers among the slowest instances Names kept, explained; valid after the
// jitter's finish() (its merged causes).
RangeOutliers range_outliers(const Names& names, const NameStats& range, const Jitter& jitter,
                             const TraceContext& trace);

// Outliers as the report's JSON writes the jitter's: start_ms (from the trace's start),
// duration_ms, excess_ms, thread, causes [{cause, overlap_ms, events}], children (the deviating
// ranges, each with its share of the outlier's excess and its own children).
nlohmann::json outliers_json(const std::vector<Outlier>& outliers, const TraceContext& trace);

}  // namespace gpuprobe::analysis
