// The percentile trigger's window: its quantile is within one bucket (4.4 %) of the exact one,
// whatever the distribution, and samples leave it as time moves on.
#include "flight/rolling_quantile.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::flight {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST_CASE("the quantile is the exact one to within a bucket") {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ms(std::log(20.0), 0.8);
  RollingQuantile window(10 * kSecond);
  std::vector<std::int64_t> samples;
  for (int i = 0; i < 5000; ++i) {
    const auto d = static_cast<std::int64_t>(ms(rng) * 1e6);
    samples.push_back(d);
    window.add(5 * kSecond + i, d);
  }
  std::sort(samples.begin(), samples.end());
  for (const double q : {0.5, 0.9, 0.99, 0.999}) {
    CAPTURE(q);
    const auto rank = static_cast<std::size_t>(std::ceil(q * samples.size())) - 1;
    const double exact = static_cast<double>(samples[rank]);
    const double estimate = static_cast<double>(window.quantile(6 * kSecond, q));
    CHECK(estimate >= exact);  // the bucket's upper bound
    CHECK(estimate <= exact * 1.045);
  }
  CHECK(window.count(6 * kSecond) == 5000);
  CHECK(window.max(6 * kSecond) == samples.back());
}

TEST_CASE("samples leave the window as time moves on") {
  RollingQuantile window(10 * kSecond);
  for (int i = 0; i < 100; ++i) window.add(1 * kSecond, 100'000'000);  // 100 ms, at t=1 s
  for (int i = 0; i < 100; ++i) window.add(8 * kSecond, 1'000'000);    // 1 ms, at t=8 s
  CHECK(window.count(9 * kSecond) == 200);
  CHECK(window.quantile(9 * kSecond, 0.99) >= 100'000'000);
  // At t=12 s the window is (2 s, 12 s]: the slow ones have left it.
  CHECK(window.count(12 * kSecond) == 100);
  CHECK(window.quantile(12 * kSecond, 0.99) <= 1'050'000);
  CHECK(window.max(12 * kSecond) == 1'000'000);
  CHECK(window.count(30 * kSecond) == 0);
  CHECK(window.quantile(30 * kSecond, 0.99) == 0);
  // A sample older than what a slot now holds is ignored rather than counted in the wrong slot.
  window.add(31 * kSecond, 5'000'000);
  window.add(11 * kSecond, 500'000'000);
  CHECK(window.count(31 * kSecond) == 1);
}

}  // namespace
}  // namespace gpuprobe::flight
