// Clock selection and calibration: which tick source the hot path reads, and how ticks become
// nanoseconds. Conversion happens only on the collector side (TimeBase), never while recording.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::core {

enum class ClockSource : std::uint8_t { kTsc, kMonotonic };

// True on x86 CPUs that advertise an invariant TSC (CPUID 0x80000007, EDX bit 8): its rate does
// not change with frequency scaling or C-states, so it can stand in for a wall clock.
bool tsc_is_invariant() noexcept;

std::string_view clock_name(ClockSource source) noexcept;

// The tick counter of `source` now.
std::uint64_t read_ticks(ClockSource source) noexcept;

// One reading of ticks, CLOCK_MONOTONIC and CLOCK_REALTIME, taken close together.
struct ClockSample {
  std::uint64_t ticks;
  std::int64_t mono_ns;  // CLOCK_MONOTONIC at `ticks`
  std::int64_t wall_ns;  // CLOCK_REALTIME at `ticks`
};

// Takes the sample whose tick reads bracket the CLOCK_MONOTONIC read most tightly out of a few
// tries, so a preemption between the reads does not skew it.
ClockSample take_sample(ClockSource source) noexcept;

// The process-wide estimate of nanoseconds per tick (1 for CLOCK_MONOTONIC); the first call for
// the TSC measures it over 20 ms.
double ns_per_tick(ClockSource source) noexcept;

// The mapping from ticks to wall-clock nanoseconds for one session (TimeBase): anchored at the
// start sample, its rate re-measured against CLOCK_MONOTONIC over the whole span since — when
// the span has doubled, and at least every minute — each new rate a line of its own that starts
// where the previous one ended, so ticks already converted keep their nanoseconds.
class Calibration {
 public:
  explicit Calibration(ClockSource source) noexcept;

  // When due, takes a new sample and adds a line. Called by the collector before each drain.
  void refresh() noexcept;

  TimeBase time_base() const noexcept { return time_base_; }
  ClockSource source() const noexcept { return source_; }
  const ClockSample& start() const noexcept { return start_; }

 private:
  ClockSource source_;
  ClockSample start_{};
  TimeBase time_base_;
  std::int64_t next_span_ns_ = 0;  // since the start: when the rate is next re-measured
};

}  // namespace gpuprobe::core
