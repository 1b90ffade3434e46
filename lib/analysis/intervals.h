// Time intervals, and the two operations several analyses need on them: their union, and how
// much of a span the union covers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuprobe::analysis {

struct Interval {
  std::int64_t begin, end;
};

// Sorted, overlapping intervals merged: their union.
inline void merge(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::size_t out = 0;
  for (const Interval& i : v) {
    if (out > 0 && i.begin <= v[out - 1].end) {
      v[out - 1].end = std::max(v[out - 1].end, i.end);
    } else {
      v[out++] = i;
    }
  }
  v.resize(out);
}

// How much of [begin, end) merged, sorted `v` covers, and how many of its intervals touch it.
inline std::pair<std::int64_t, std::uint64_t> overlap(const std::vector<Interval>& v,
                                                      std::int64_t begin, std::int64_t end) {
  auto it = std::lower_bound(v.begin(), v.end(), begin,
                             [](const Interval& i, std::int64_t t) { return i.end <= t; });
  std::int64_t covered = 0;
  std::uint64_t n = 0;
  for (; it != v.end() && it->begin < end; ++it) {
    covered += std::min(end, it->end) - std::max(begin, it->begin);
    ++n;
  }
  return {covered, n};
}

}  // namespace gpuprobe::analysis
