// The jitter analysis on traces whose outliers and causes are known exactly.
#include "analysis/jitter.h"

#include <map>
#include <string>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("three GC pauses inside the three slowest of 1000 requests: GC is named for each") {
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 1000; ++i) {
    // 997 requests of 10 ms; requests 100, 500 and 900 take 40, 50 and 60 ms, and each holds a
    // 30 ms GC pause (so two of them also spent 10 and 20 ms more than usual outside any child
    // range: a CPU gap). Another GC pause and a compile fall between requests.
    const bool slow = i == 100 || i == 500 || i == 900;
    const std::int64_t length = slow ? (i == 100 ? 40 : i == 500 ? 50 : 60) * kMs : 10 * kMs;
    t.range(kRequest, at, at + length);
    if (slow) t.range(kGcPause, at + 5 * kMs, at + 35 * kMs);
    if (i == 300) t.range(kGcPause, at + length + kMs, at + length + 2 * kMs);
    if (i == 700) t.range(kCompile, at + length + kMs, at + length + 3 * kMs);
    at += length + 5 * kMs;
  }
  const analysis::JitterResult& r = t.run().jitter;
  CHECK(r.latency_name == "request");
  REQUIRE(r.outliers.size() == 3);
  const double expected_ms[] = {60, 50, 40};
  for (int i = 0; i < 3; ++i) {
    const analysis::Outlier& o = r.outliers[i];
    CHECK(o.duration_ns == static_cast<std::int64_t>(expected_ms[i] * kMs));
    CHECK(o.thread == "server");
    REQUIRE(!o.causes.empty());
    CHECK(o.causes[0].cause == "gc pause");
    CHECK(o.causes[0].overlap_ns == 30 * kMs);
    // No GPU work in this trace and nothing else overlaps; the self time beyond the median
    // 10 ms is the CPU gap.
    REQUIRE(o.causes.size() == (i < 2 ? 2u : 1u));
    if (i < 2) {
      CHECK(o.causes[1].cause == "CPU gap");
      CHECK(static_cast<double>(o.causes[1].overlap_ns) ==
            Approx(static_cast<double>((20 - 10 * i) * kMs)).epsilon(0.02));
    }
  }
  REQUIRE(r.cause_summary.size() == 2);
  CHECK(r.cause_summary[0].cause == "gc pause");
  CHECK(r.cause_summary[0].overlap_ns == 90 * kMs);
  CHECK(r.cause_summary[0].events == 3);
  CHECK(r.cause_summary[1].cause == "CPU gap");
  CHECK(r.cause_summary[1].events == 2);
  CHECK(r.latency_count == 1000);
  CHECK(r.latency_p50_ms == Approx(10).epsilon(0.02));
  std::uint64_t in_histogram = 0;
  for (const auto& [edge, n] : r.latency_histogram) in_histogram += n;
  CHECK(in_histogram == 1000);
}

TEST_CASE("a compile inside an outlier is named, with the guard that made it a recompile") {
  // 200 requests of 10 ms; request 50 holds the frame's first compile (30 ms), request 150 a
  // recompile for a new shape (20 ms) with its reason.
  static constexpr CallSite first{"torch.compile 0/0", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite again{"torch.compile 0/1", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite why{
      "recompile 0/1: 0/0: tensor 'x' size mismatch at index 0", "", "", 0, 0, Category::kCompile};
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 200; ++i) {
    const std::int64_t length = (i == 50 ? 40 : i == 150 ? 30 : 10) * kMs;
    t.range(kRequest, at, at + length);
    if (i == 50) t.range(first, at + kMs, at + 31 * kMs);
    if (i == 150) {
      t.events.push_back(
          Event{EventType::kInstant, 0, &why, static_cast<std::uint64_t>(at + kMs), 0, 0.0});
      t.range(again, at + kMs, at + 21 * kMs);
    }
    at += length + kMs;
  }
  const analysis::JitterResult& r = t.run().jitter;
  REQUIRE(r.outliers.size() == 2);
  CHECK(r.outliers[0].causes[0].cause == "compile");
  CHECK(r.outliers[0].causes[0].detail == "torch.compile 0/0, the frame's first compile");
  CHECK(r.outliers[1].causes[0].detail ==
        "torch.compile 0/1, a recompile: 0/0: tensor 'x' size mismatch at index 0");
}

TEST_CASE("idle GPU within a slow range explains it") {
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 50; ++i) {
    const std::int64_t length = i == 25 ? 20 * kMs : 2 * kMs;
    t.range(kForward, at, at + length);
    // One 1 ms kernel per forward, launched from it; in the slow one the GPU then sits idle.
    GpuActivity& k = t.activity(GpuActivityKind::kKernel, "gemm", at + 100 * kUs, at + 1100 * kUs);
    k.range = &kForward;
    k.stream = 7;
    at += length + kMs;
  }
  analysis::ReportOptions options;
  options.outlier_threshold_ms = 5;  // of 50 forwards, the P99 is the slowest itself
  const analysis::JitterResult& r = t.run(options).jitter;
  CHECK(r.latency_name == "forward");
  CHECK(r.outlier_threshold_ms == 5);
  REQUIRE(r.outliers.size() == 1);
  REQUIRE(r.outliers[0].causes.size() == 1);
  CHECK(r.outliers[0].causes[0].cause == "GPU idle");
  CHECK(r.outliers[0].causes[0].overlap_ns == 19 * kMs);
}

TEST_CASE("time a slow request spent outside its child ranges is named a CPU gap") {
  for (const bool children_first : {false, true}) {
    CAPTURE(children_first);
    Trace t;
    requests_with_gaps(t, children_first);
    const analysis::JitterResult& r = t.run().jitter;
    CHECK(r.latency_name == "request");
    REQUIRE(r.outliers.size() == 3);
    for (const analysis::Outlier& o : r.outliers) {
      CHECK(o.duration_ns == 35 * kMs);
      REQUIRE(o.causes.size() == 1);
      CHECK(o.causes[0].cause == "CPU gap");
      CHECK(static_cast<double>(o.causes[0].overlap_ns) == Approx(25.0 * kMs).epsilon(0.02));
    }
  }
}

TEST_CASE("allocator calls, synchronizations and large copies are causes; small copies are not") {
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 200; ++i) {
    const bool slow = i == 50;
    const std::int64_t length = slow ? 30 * kMs : 5 * kMs;
    t.range(kRequest, at, at + length);
    if (slow) {
      t.activity(GpuActivityKind::kRuntimeApi, "cudaMalloc", at + kMs, at + 3 * kMs);
      t.activity(GpuActivityKind::kRuntimeApi, "cudaFreeHost", at + 3 * kMs, at + 4 * kMs);
      t.activity(GpuActivityKind::kRuntimeApi, "cudaDeviceSynchronize", at + 5 * kMs, at + 9 * kMs);
      GpuActivity& big =
          t.activity(GpuActivityKind::kMemcpy, "Memcpy DtoH", at + 10 * kMs, at + 18 * kMs);
      big.bytes = 64 << 20;
      GpuActivity& small =
          t.activity(GpuActivityKind::kMemcpy, "Memcpy DtoH", at + 20 * kMs, at + 21 * kMs);
      small.bytes = 4096;
    }
    at += length + kMs;
  }
  analysis::ReportOptions options;
  options.outlier_threshold_ms = 10;
  const analysis::JitterResult& r = t.run(options).jitter;
  REQUIRE(r.outliers.size() == 1);
  std::map<std::string, std::int64_t> causes;
  for (const analysis::CauseOverlap& c : r.outliers[0].causes) causes[c.cause] = c.overlap_ns;
  CHECK(causes.at("allocator") == 2 * kMs);  // cudaMalloc; cudaFreeHost frees host memory
  CHECK(causes.at("synchronization") == 4 * kMs);
  CHECK(causes.at("large copy") == 8 * kMs);
  CHECK(causes.at("GPU idle") == 30 * kMs - 9 * kMs);  // GPU work: the two copies
}

}  // namespace
}  // namespace gpuprobe::test

namespace gpuprobe::test {
namespace {

TEST_CASE("an outlier is explained by the children that deviated from their medians, top-down") {
  // 400 requests of 0.36 ms, each a parse (0.05 ms) and a forward (0.3 ms) holding a compute
  // (0.08 ms); request 200's compute takes 12.1 ms, all of it in one launch of 11.9 ms (which
  // every other compute runs in 0.02 ms). Nothing else is recorded: no GC, no compile, no GPU.
  Trace t;
  std::int64_t at = 0;
  const std::int64_t us = kMs / 1000;
  for (int i = 0; i < 400; ++i) {
    const bool slow = i == 200;
    const std::int64_t launch = slow ? 11'900 * us : 20 * us;
    const std::int64_t compute = launch + 60 * us;
    const std::int64_t forward = compute + 220 * us;
    const std::int64_t request = forward + 60 * us;
    t.range(kRequest, at, at + request);
    t.range(kParse, at + 5 * us, at + 55 * us);
    t.range(kForward, at + 60 * us, at + 60 * us + forward);
    t.range(kCompute, at + 100 * us, at + 100 * us + compute);
    t.range(kLaunch, at + 120 * us, at + 120 * us + launch);
    at += request + 100 * us;
  }
  const analysis::JitterResult& r = t.run().jitter;
  REQUIRE(r.latency_name == "request");
  REQUIRE(r.outliers.size() == 1);
  const analysis::Outlier& o = r.outliers[0];
  CHECK(o.duration_ns == (11'900 + 60 + 220 + 60) * us);
  REQUIRE(o.children.size() == 1);  // parse did not deviate
  const analysis::Deviation& forward = o.children[0];
  CHECK(forward.name == "forward");
  CHECK(forward.median_ns == Approx(300 * us).epsilon(0.02));
  CHECK(static_cast<double>(forward.excess_ns) / static_cast<double>(o.excess_ns) ==
        Approx(1.0).epsilon(0.02));
  REQUIRE(forward.children.size() == 1);
  CHECK(forward.children[0].name == "compute");
  REQUIRE(forward.children[0].children.size() == 1);
  const analysis::Deviation& launch = forward.children[0].children[0];
  CHECK(launch.name == "launch");
  CHECK(launch.duration_ns == 11'900 * us);
  CHECK(launch.excess_ns == Approx(11'880 * us).epsilon(0.02));
}

}  // namespace
}  // namespace gpuprobe::test
