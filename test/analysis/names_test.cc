// Per-name statistics: counts and totals, self time in either order ranges arrive in, and the
// GPU time each range launched.
#include "analysis/names.h"

#include <map>
#include <string>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("self time is exact whether children or parents arrive first") {
  for (const bool children_first : {false, true}) {
    CAPTURE(children_first);
    Trace t;
    requests_with_gaps(t, children_first);
    const analysis::NamesResult& r = t.run().names;
    std::map<std::string, const analysis::NameStats*> by_name;
    for (const analysis::NameStats* s : r.ranges) by_name[s->name] = s;
    REQUIRE(by_name.size() == 4);
    CHECK(by_name["request"]->count == 1000);
    CHECK(by_name["request"]->self_ns == 1000 * kMs + 3 * 25 * kMs);
    CHECK(by_name["compute"]->self_ns == 1000 * 5 * kMs);
    CHECK(by_name["launch"]->self_ns == 1000 * kMs);
    CHECK(by_name["parse"]->self_ns == 1000 * 3 * kMs);
    CHECK(by_name["request"]->max_ns == 35 * kMs);
    CHECK(by_name["request"]->slowest.size() == 64);  // ReportOptions::keep_slowest
    // Sorted by total time.
    CHECK(r.ranges[0]->name == "request");
    CHECK(r.kernels.empty());
    CHECK(r.gpu_kernel_ns == 0);
  }
}

TEST_CASE("GPU time is attributed to the ranges that launched it") {
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 50; ++i) {
    t.range(kForward, at, at + 2 * kMs);
    GpuActivity& k = t.activity(GpuActivityKind::kKernel, "gemm", at + 100 * kUs, at + 1100 * kUs);
    k.range = &kForward;
    GpuActivity& other = t.activity(GpuActivityKind::kKernel, "copy_kernel", at, at + 10 * kUs);
    other.range = nullptr;  // launched outside any range
    at += 3 * kMs;
  }
  const analysis::NamesResult& r = t.run().names;
  REQUIRE(r.ranges.size() == 1);
  CHECK(r.ranges[0]->name == "forward");
  CHECK(r.ranges[0]->gpu_ns == 50 * kMs);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0]->name == "gemm");
  CHECK(r.kernels[0]->count == 50);
  CHECK(r.kernels[0]->quantile_ns(0.5) == Approx(1e6).epsilon(0.02));
  CHECK(r.kernels[1]->name == "copy_kernel");
  CHECK(r.gpu_kernel_ns == 50 * kMs + 50 * 10 * kUs);
}

TEST_CASE("steps share one row whatever their number; GPU-timeline copies of ranges are skipped") {
  static constexpr CallSite kStep3{"ProfilerStep#3", "", "", 0, 0, Category::kStep};
  static constexpr CallSite kGpuCopy{"forward", "", "", 0, 0, Category::kCuda};
  Trace t;
  t.range(kStep, 0, 10 * kMs);
  t.range(kStep3, 10 * kMs, 30 * kMs);
  t.range(kGpuCopy, 0, 5 * kMs);
  const analysis::NamesResult& r = t.run().names;
  REQUIRE(r.ranges.size() == 1);
  CHECK(r.ranges[0]->name == "ProfilerStep");
  CHECK(r.ranges[0]->count == 2);
  CHECK(r.ranges[0]->total_ns == 30 * kMs);
}

}  // namespace
}  // namespace gpuprobe::test
