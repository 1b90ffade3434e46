// The statistics of one name — a CPU range's or a kernel's — in fixed memory: count, totals, a
// duration histogram and the slowest instances.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/log_histogram.h"
#include "gpuprobe/call_site.hpp"

namespace gpuprobe::analysis {

struct NameStats {
  std::string name;
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, min_ns = INT64_MAX, max_ns = 0;
  std::int64_t gpu_ns = 0;  // ranges: GPU time of the kernels they launched
  // Ranges: time on their own thread outside any recorded child range (torch's "self CPU").
  std::int64_t self_ns = 0;
  // Ranges: the category of the name's first instance (steps: kStep).
  Category category = Category::kApp;
  // Ranges: instances at the top level of their thread (inside no other range there, or only in
  // ranges that seldom repeat: one around the whole run), on threads other than compile
  // workers'; set by Names::finish().
  std::uint64_t top_level = 0;
  // Kernels launched with declared costs (gpuprobe::launch's KernelCost): their sums, and the
  // time of those calls, for achieved bandwidth and FLOP/s.
  double declared_bytes = 0, declared_flops = 0;
  std::int64_t declared_ns = 0;
  std::unique_ptr<LogHistogram> histogram = std::make_unique<LogHistogram>();
  std::unique_ptr<LogHistogram> self_histogram;  // ranges only: their self times
  // Ranges that are runs of compiled code: 1 an Inductor graph's ("## Call CompiledFxGraph" from
  // torch.profiler, "compiled graph" from gpuprobe.torch), 2 a Dynamo frame's ("Torch-Compiled
  // Region", which also holds the eager code at a graph break); 0 neither.
  std::uint8_t compiled_run = 0;
  struct Instance {
    std::int64_t begin, end;
    std::uint32_t thread;
    std::int64_t self_ns;
  };
  std::vector<Instance> slowest;  // a min-heap on duration
  // The duration at quantile q, within [min, max] (the histogram's bucket middles may not be).
  double quantile_ns(double q) const {
    const double v = histogram->quantile_ns(q);
    return v < static_cast<double>(min_ns)   ? static_cast<double>(min_ns)
           : v > static_cast<double>(max_ns) ? static_cast<double>(max_ns)
                                             : v;
  }
  // One instance; `self` < 0 for kernels (no self time).
  void add(std::int64_t begin, std::int64_t end, std::uint32_t thread, std::size_t keep,
           std::int64_t self = -1);
};

}  // namespace gpuprobe::analysis
