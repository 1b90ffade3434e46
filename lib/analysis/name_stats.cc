#include "analysis/name_stats.h"

#include <algorithm>

namespace gpuprobe::analysis {

void NameStats::add(std::int64_t begin, std::int64_t end, std::uint32_t thread, std::size_t keep,
                    std::int64_t self) {
  const std::int64_t d = end - begin;
  ++count;
  total_ns += d;
  min_ns = std::min(min_ns, d);
  max_ns = std::max(max_ns, d);
  histogram->add(d);
  if (self >= 0) {
    self_ns += self;
    if (!self_histogram) self_histogram = std::make_unique<LogHistogram>();
    self_histogram->add(self);
  }
  const auto longer = [](const Instance& a, const Instance& b) {
    return a.end - a.begin > b.end - b.begin;
  };
  if (slowest.size() < keep) {
    slowest.push_back({begin, end, thread, self});
    std::push_heap(slowest.begin(), slowest.end(), longer);
  } else if (keep > 0 && d > slowest.front().end - slowest.front().begin) {
    std::pop_heap(slowest.begin(), slowest.end(), longer);
    slowest.back() = {begin, end, thread, self};
    std::push_heap(slowest.begin(), slowest.end(), longer);
  }
}

}  // namespace gpuprobe::analysis
