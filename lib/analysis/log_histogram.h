// A histogram of durations in logarithmic buckets (32 per doubling: ±1.1 % per value) over
// 1 ns .. ~2^40 ns, for percentiles of any number of samples in fixed memory.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace gpuprobe::analysis {

class LogHistogram {
 public:
  static constexpr int kPerOctave = 32;
  static constexpr int kBuckets = 41 * kPerOctave;

  void add(std::int64_t ns) {
    const double v = static_cast<double>(ns < 1 ? 1 : ns);
    int b = static_cast<int>(std::log2(v) * kPerOctave);
    if (b >= kBuckets) b = kBuckets - 1;
    counts_[static_cast<std::size_t>(b)]++;
    ++total_;
  }

  // The value at quantile q (0..1): the geometric middle of the bucket holding it.
  double quantile_ns(double q) const {
    if (total_ == 0) return 0;
    const std::uint64_t rank =
        static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_)));
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += counts_[static_cast<std::size_t>(b)];
      if (seen >= rank && seen > 0) return std::exp2((b + 0.5) / kPerOctave);
    }
    return std::exp2(static_cast<double>(kBuckets) / kPerOctave);
  }

  std::uint64_t total() const { return total_; }
  // Bucket b covers [exp2(b / 32), exp2((b + 1) / 32)) ns.
  std::uint32_t count(int b) const { return counts_[static_cast<std::size_t>(b)]; }

 private:
  std::array<std::uint32_t, kBuckets> counts_{};
  std::uint64_t total_ = 0;
};

}  // namespace gpuprobe::analysis
