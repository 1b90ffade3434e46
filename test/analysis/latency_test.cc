// Latency percentiles per range name.
#include "analysis/latency.h"

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("percentiles of 1000 requests, three of them slow") {
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t length = i == 100   ? 40 * kMs
                                : i == 500 ? 50 * kMs
                                : i == 900 ? 60 * kMs
                                : i < 100  ? 20 * kMs
                                           : 10 * kMs;
    t.range(kRequest, at, at + length);
    at += length + kMs;
  }
  t.range(kParse, 0, kMs);
  const std::vector<analysis::LatencyRow>& rows = t.run().latency;
  REQUIRE(rows.size() == 2);
  const analysis::LatencyRow& request = rows[0];  // by total time, as the ranges
  CHECK(request.name == "request");
  CHECK(request.count == 1000);
  CHECK(request.p50_ms == Approx(10).epsilon(0.02));
  CHECK(request.p90_ms == Approx(20).epsilon(0.02));  // 100 of 1000 take 20 ms or more
  CHECK(request.p99_ms == Approx(20).epsilon(0.02));
  CHECK(request.p999_ms == Approx(50).epsilon(0.02));
  CHECK(request.max_ms == 60);
  CHECK(rows[1].name == "parse");
  CHECK(rows[1].count == 1);
  CHECK(rows[1].p50_ms == 1);  // within [min, max]: exact for one instance
}

}  // namespace
}  // namespace gpuprobe::test
