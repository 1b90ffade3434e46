#include "flight/rolling_quantile.h"

#include <algorithm>
#include <cmath>

namespace gpuprobe::flight {

RollingQuantile::RollingQuantile(std::int64_t window_ns)
    : slot_ns_(std::max<std::int64_t>(window_ns / kSlots, 1)), slots_(kSlots) {}

int RollingQuantile::bucket_of(std::int64_t duration_ns) {
  const double us = static_cast<double>(duration_ns) / 1e3;
  if (!(us > 1)) return 0;
  const int b = static_cast<int>(std::ceil(std::log2(us) * kBucketsPerDoubling));
  return std::min(b, kBuckets - 1);
}

std::int64_t RollingQuantile::upper_bound_ns(int bucket) {
  return static_cast<std::int64_t>(
      std::llround(1e3 * std::exp2(static_cast<double>(bucket) / kBucketsPerDoubling)));
}

void RollingQuantile::advance(std::int64_t now_ns) {
  const std::int64_t epoch = now_ns / slot_ns_;
  for (Slot& slot : slots_) {
    if (slot.epoch >= 0 && slot.epoch <= epoch - kSlots) slot = Slot{};
  }
}

void RollingQuantile::add(std::int64_t at_ns, std::int64_t duration_ns) {
  const std::int64_t epoch = at_ns / slot_ns_;
  Slot& slot = slots_[static_cast<std::size_t>(epoch % kSlots)];
  if (slot.epoch > epoch) return;  // older than the window this slot holds now
  if (slot.epoch != epoch) slot = Slot{epoch};
  ++slot.count;
  slot.max = std::max(slot.max, duration_ns);
  ++slot.buckets[static_cast<std::size_t>(bucket_of(duration_ns))];
}

std::uint64_t RollingQuantile::count(std::int64_t now_ns) {
  advance(now_ns);
  std::uint64_t n = 0;
  for (const Slot& slot : slots_) n += slot.count;
  return n;
}

std::int64_t RollingQuantile::max(std::int64_t now_ns) {
  advance(now_ns);
  std::int64_t m = 0;
  for (const Slot& slot : slots_) m = std::max(m, slot.max);
  return m;
}

std::int64_t RollingQuantile::quantile(std::int64_t now_ns, double q) {
  const std::uint64_t n = count(now_ns);
  if (n == 0) return 0;
  // The smallest bucket with at least ceil(q * n) samples at or below it: the nearest-rank
  // quantile, as Prometheus' histogram_quantile would place it.
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
  std::uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    for (const Slot& slot : slots_) seen += slot.buckets[static_cast<std::size_t>(b)];
    if (seen >= rank) return std::min(upper_bound_ns(b), max(now_ns));
  }
  return max(now_ns);
}

}  // namespace gpuprobe::flight
