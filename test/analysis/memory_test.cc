// Allocator pressure at the outliers: the allocator's state at each (reserved, allocated, the
// share held and not used) and what it did within it (cudaMalloc/cudaFree calls, retries), and
// fragmentation over the trace — from counters and calls placed exactly.
#include "analysis/memory.h"

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

constexpr CallSite kAllocated{"cuda allocated bytes", "", "", 0, 0, Category::kAllocator};
constexpr CallSite kReserved{"cuda reserved bytes", "", "", 0, 0, Category::kAllocator};
constexpr CallSite kRetries{"cuda alloc retries", "", "", 0, 0, Category::kAllocator};

void counter(Trace& t, const CallSite& site, std::int64_t at, double value) {
  t.events.push_back(Event{EventType::kCounter, 0, &site, static_cast<std::uint64_t>(at),
                           static_cast<std::uint64_t>(at), value});
}

TEST_CASE("an outlier that the allocator slowed shows its calls, retries and state") {
  // 100 requests of 10 ms; the allocator's counters sampled before each. Request 60 takes 40 ms:
  // three cudaMalloc calls and a retry within it, with 2 GiB reserved of which 0.5 GiB is used.
  Trace t;
  const double gib = 1024.0 * 1024 * 1024;
  std::int64_t at = 0;
  for (int i = 0; i < 100; ++i) {
    const bool slow = i == 60;
    const std::int64_t length = (slow ? 40 : 10) * kMs;
    counter(t, kAllocated, at, (slow ? 0.5 : 1.0) * gib);
    counter(t, kReserved, at, (i < 60 ? 1.25 : 2.0) * gib);
    t.range(kRequest, at + kUs, at + kUs + length);
    if (slow) {
      for (int k = 0; k < 3; ++k) {
        const std::int64_t call = at + (5 + 10 * k) * kMs;
        t.activity(GpuActivityKind::kRuntimeApi, "cudaMalloc", call, call + 2 * kMs);
      }
      counter(t, kRetries, at + 20 * kMs, 1);
    }
    if (i == 80) t.activity(GpuActivityKind::kRuntimeApi, "cudaFree", at + kMs, at + 2 * kMs);
    at += length + 5 * kMs;
  }
  const analysis::ReportResult& r = t.run();
  REQUIRE(r.jitter.outliers.size() == 1);
  const analysis::MemoryResult& m = r.memory;
  CHECK(m.samples == 101);  // the two counters read at once are one state; and the retry
  CHECK(m.malloc_calls == 3);
  CHECK(m.free_calls == 1);
  CHECK(m.retries == 1);
  CHECK(m.max_reserved == 2.0 * gib);
  CHECK(m.fragmentation_max == Approx(0.75));              // 0.5 of 2 GiB used, at request 60
  CHECK(m.fragmentation_p50 == Approx(0.2).margin(0.01));  // 1 of 1.25 GiB used, the first 60
  REQUIRE(m.outliers.size() == 1);
  const analysis::OutlierMemory& o = m.outliers[0];
  CHECK(o.begin_ns == r.jitter.outliers[0].begin_ns);
  CHECK(o.malloc_calls == 3);
  CHECK(o.free_calls == 0);
  CHECK(o.retries == 1);
  CHECK(o.state.reserved == 2.0 * gib);
  CHECK(o.state.allocated == 0.5 * gib);
  CHECK(o.state.fragmentation() == Approx(0.75));
}

TEST_CASE("without allocator counters or calls: nothing is claimed") {
  Trace t;
  for (int i = 0; i < 50; ++i)
    t.range(kRequest, i * 20 * kMs, i * 20 * kMs + (i == 25 ? 15 : 5) * kMs);
  const analysis::MemoryResult& m = t.run().memory;
  CHECK(m.samples == 0);
  CHECK(m.fragmentation_p50 < 0);
  for (const analysis::OutlierMemory& o : m.outliers) {
    CHECK(o.state.at_ns == 0);
    CHECK(o.malloc_calls == 0);
  }
}

}  // namespace
}  // namespace gpuprobe::test
