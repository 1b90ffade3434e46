// A quantile of durations over a rolling time window, for the percentile trigger: the window is
// cut into 10 slots, each a histogram of log-spaced buckets (16 per doubling, so a quantile is
// known to within 4.4 %), and the oldest slot is cleared as time moves on. Adding a sample and
// reading the quantile cost the same whatever the request rate, and the memory is fixed
// (~20 KiB), unlike keeping every sample.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gpuprobe::flight {

class RollingQuantile {
 public:
  static constexpr int kSlots = 10;
  static constexpr int kBucketsPerDoubling = 16;
  // 1 us to ~73 minutes (2^32 us); shorter samples count in the first bucket, longer ones in
  // the last.
  static constexpr int kBuckets = 32 * kBucketsPerDoubling;

  explicit RollingQuantile(std::int64_t window_ns);

  // A sample of `duration_ns` that ended at `at_ns` (any monotonic nanosecond clock).
  void add(std::int64_t at_ns, std::int64_t duration_ns);
  // Samples in the window ending at `now_ns`.
  std::uint64_t count(std::int64_t now_ns);
  // The `q` quantile (0 < q < 1) of the window ending at `now_ns`, as the upper bound of its
  // bucket; 0 without samples.
  std::int64_t quantile(std::int64_t now_ns, double q);
  // The longest sample in the window, exact.
  std::int64_t max(std::int64_t now_ns);

 private:
  static int bucket_of(std::int64_t duration_ns);
  static std::int64_t upper_bound_ns(int bucket);
  // Clears the slots that left the window ending at `now_ns`.
  void advance(std::int64_t now_ns);

  struct Slot {
    std::int64_t epoch = -1;  // now_ns / slot width when it was filled
    std::uint64_t count = 0;
    std::int64_t max = 0;
    std::array<std::uint32_t, kBuckets> buckets{};
  };
  const std::int64_t slot_ns_;
  std::vector<Slot> slots_;
};

}  // namespace gpuprobe::flight
