#include "core/clock.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "gpuprobe/detail/gate.hpp"

namespace gpuprobe::core {
namespace {

std::int64_t read_ns(clockid_t id) noexcept {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Until a session has run long enough to measure its own slope, the TSC rate comes from one
// 20 ms measurement per process. Sampling error is ~0.1 us, so this first estimate is good to
// ~5 ppm; sessions refine it from their own start.
double initial_ns_per_tick(ClockSource source) noexcept {
  if (source == ClockSource::kMonotonic) return 1.0;
  static const double rate = [] {
    const ClockSample a = take_sample(ClockSource::kTsc);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const ClockSample b = take_sample(ClockSource::kTsc);
    return static_cast<double>(b.mono_ns - a.mono_ns) / static_cast<double>(b.ticks - a.ticks);
  }();
  return rate;
}

// Below this span the measured slope is noisier than the process-wide estimate.
constexpr std::int64_t kMinSlopeSpanNs = 50'000'000;
// The rate is re-measured each time the span since the start doubles, and at least this often:
// CLOCK_MONOTONIC follows NTP's frequency corrections, which a fixed rate would drift from.
constexpr std::int64_t kMaxRefreshNs = 60'000'000'000;
// A new line steers towards the measured one by at most this much of the rate.
constexpr double kMaxSteer = 1e-4;

}  // namespace

bool tsc_is_invariant() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

std::string_view clock_name(ClockSource source) noexcept {
  return source == ClockSource::kTsc ? "tsc" : "monotonic";
}

std::uint64_t read_ticks(ClockSource source) noexcept {
  return detail::now_ticks(source == ClockSource::kTsc ? detail::kTscBit : 0);
}

ClockSample take_sample(ClockSource source) noexcept {
  ClockSample best{};
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t t0 = read_ticks(source);
    const std::int64_t mono = read_ns(CLOCK_MONOTONIC);
    const std::uint64_t t1 = read_ticks(source);
    if (t1 - t0 < best_width) {
      best_width = t1 - t0;
      best.ticks = t0 + (t1 - t0) / 2;
      best.mono_ns = mono;
    }
  }
  // The wall clock is read once, next to a monotonic read, and carried over as an offset.
  const std::int64_t mono = read_ns(CLOCK_MONOTONIC);
  const std::int64_t wall = read_ns(CLOCK_REALTIME);
  best.wall_ns = best.mono_ns + (wall - mono);
  return best;
}

double ns_per_tick(ClockSource source) noexcept { return initial_ns_per_tick(source); }

Calibration::Calibration(ClockSource source) noexcept : source_(source) {
  // The process's first estimate of the rate sleeps 20 ms: the start comes after it, so that a
  // session's first step and its trace do not begin with gpuprobe's own wait.
  const double rate = initial_ns_per_tick(source);
  start_ = take_sample(source);
  time_base_ = TimeBase(start_.ticks, start_.wall_ns, rate);
  next_span_ns_ = kMinSlopeSpanNs;
}

void Calibration::refresh() noexcept {
  if (source_ == ClockSource::kMonotonic) return;  // ticks are nanoseconds: the slope is exact
  const ClockSample now = take_sample(source_);
  const std::int64_t span_ns = now.mono_ns - start_.mono_ns;
  if (span_ns < next_span_ns_ || now.ticks <= start_.ticks) return;
  next_span_ns_ = std::max(kMinSlopeSpanNs, std::min(span_ns * 2, span_ns + kMaxRefreshNs));
  // The best line: through the start sample, at the rate measured over the whole span.
  const double rate = static_cast<double>(span_ns) / static_cast<double>(now.ticks - start_.ticks);
  // The conversion so far stays as it is (the batches written used it); from now on a new line
  // starts where it has got to and steers to meet the best line by the next refresh, so that
  // the error of the earlier rates does not stay in the offset.
  const double ahead = static_cast<double>(next_span_ns_ - span_ns) / rate;  // ticks
  const double best_then = rate * (static_cast<double>(now.ticks - start_.ticks) + ahead);
  const double here = static_cast<double>(time_base_.wall_ns(now.ticks) - start_.wall_ns);
  const double slope =
      std::clamp((best_then - here) / ahead, rate * (1 - kMaxSteer), rate * (1 + kMaxSteer));
  try {
    time_base_ = TimeBase(time_base_, now.ticks, slope);
  } catch (...) {
    // Out of memory for the lines: the current one goes on.
  }
}

}  // namespace gpuprobe::core
