#include "core/clock.h"

#include <chrono>
#include <thread>

#include "support/catch.hpp"

namespace gpuprobe::core {
namespace {

std::int64_t monotonic_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST_CASE("The chosen tick source advances monotonically") {
  for (ClockSource source : {ClockSource::kMonotonic, ClockSource::kTsc}) {
    if (source == ClockSource::kTsc && !tsc_is_invariant()) continue;
    std::uint64_t prev = read_ticks(source);
    for (int i = 0; i < 100000; ++i) {
      const std::uint64_t now = read_ticks(source);
      REQUIRE(now >= prev);
      prev = now;
    }
  }
}

TEST_CASE("A sample pairs ticks with the wall clock") {
  const auto wall_before = std::chrono::system_clock::now().time_since_epoch();
  const ClockSample s = take_sample(ClockSource::kMonotonic);
  const auto wall_after = std::chrono::system_clock::now().time_since_epoch();
  REQUIRE(s.wall_ns >=
          std::chrono::duration_cast<std::chrono::nanoseconds>(wall_before).count() - 1000000);
  REQUIRE(s.wall_ns <=
          std::chrono::duration_cast<std::chrono::nanoseconds>(wall_after).count() + 1000000);
  // For the monotonic source, ticks are CLOCK_MONOTONIC nanoseconds.
  REQUIRE(static_cast<std::int64_t>(s.ticks) - s.mono_ns < 100000);
}

TEST_CASE("Calibration converts tick intervals into the nanoseconds CLOCK_MONOTONIC measures") {
  for (ClockSource source : {ClockSource::kMonotonic, ClockSource::kTsc}) {
    if (source == ClockSource::kTsc && !tsc_is_invariant()) continue;
    Calibration calibration(source);
    const std::uint64_t t0 = read_ticks(source);
    const std::int64_t m0 = monotonic_now_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    const std::uint64_t t1 = read_ticks(source);
    const std::int64_t m1 = monotonic_now_ns();
    calibration.refresh();
    const TimeBase tb = calibration.time_base();
    const double measured = static_cast<double>(tb.duration_ns(t0, t1));
    const double reference = static_cast<double>(m1 - m0);
    // Within 0.1 % plus 20 us of scheduling noise between the paired reads.
    REQUIRE(measured == Approx(reference).epsilon(0.001).margin(20000));
    // The start of the session maps to its wall-clock sample.
    REQUIRE(tb.wall_ns(calibration.start().ticks) == calibration.start().wall_ns);
  }
}

TEST_CASE("TimeBase handles ticks before its reference") {
  const TimeBase tb(1000, 5000, 2.0);
  REQUIRE(tb.wall_ns(1000) == 5000);
  REQUIRE(tb.wall_ns(1010) == 5020);
  REQUIRE(tb.wall_ns(990) == 4980);
}

}  // namespace
}  // namespace gpuprobe::core
