// Time intervals, and the operations several analyses need on them: their union, how much of a
// span the union covers, and that coverage over time.
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

// How much of each of `bins` equal slices of [begin, end) merged, sorted `v` covers, in percent.
inline std::vector<double> coverage_bins(const std::vector<Interval>& v, std::int64_t begin,
                                         std::int64_t end, int bins) {
  std::vector<double> out;
  if (bins <= 0 || end <= begin) return out;
  out.assign(static_cast<std::size_t>(bins), 0.0);
  const double slice = static_cast<double>(end - begin) / bins;
  for (const Interval& i : v) {
    for (std::int64_t t = std::max(i.begin, begin); t < std::min(i.end, end);) {
      const auto bin = std::min<std::int64_t>(
          static_cast<std::int64_t>(static_cast<double>(t - begin) / slice), bins - 1);
      const auto bin_end = begin + static_cast<std::int64_t>(slice * static_cast<double>(bin + 1));
      const std::int64_t upto = std::min(i.end, std::max(bin_end, t + 1));
      out[static_cast<std::size_t>(bin)] += static_cast<double>(upto - t) / slice * 100.0;
      t = upto;
    }
  }
  return out;
}

}  // namespace gpuprobe::analysis
