#include "gpu/range_attribution.h"

#include <map>
#include <string>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::gpu {
namespace {

constexpr CallSite kOuter{"outer", "", "", 0, 0, Category::kApp};
constexpr CallSite kInner{"inner", "", "", 0, 0, Category::kApp};
constexpr CallSite kSibling{"sibling", "", "", 0, 0, Category::kApp};

GpuActivity launch(std::uint32_t correlation, std::int64_t os_tid, std::uint64_t start,
                   std::uint64_t end) {
  GpuActivity a;
  a.kind = GpuActivityKind::kRuntimeApi;
  a.name = "cudaLaunchKernel";
  a.correlation = correlation;
  a.os_tid = os_tid;
  a.start = start;
  a.end = end;
  return a;
}

GpuActivity kernel(std::uint32_t correlation, std::uint64_t start) {
  GpuActivity a;
  a.kind = GpuActivityKind::kKernel;
  a.name = "k";
  a.correlation = correlation;
  a.start = start;
  a.end = start + 5;
  return a;
}

// Released activities as "kind/correlation" -> range name ("-" for none).
std::map<std::string, std::string> by_key(const std::vector<GpuActivity>& out) {
  std::map<std::string, std::string> m;
  for (const GpuActivity& a : out) {
    m[std::string(a.kind == GpuActivityKind::kKernel ? "kernel/" : "api/") +
      std::to_string(a.correlation)] = a.range ? a.range->name : "-";
  }
  return m;
}

TEST_CASE("Work is attributed to the innermost range around its launch") {
  RangeAttribution attribution({1000, 1000, 1000});
  attribution.add_range(7, 10, 20, &kInner);
  attribution.add_range(7, 30, 40, &kSibling);
  attribution.add_range(7, 0, 100, &kOuter);
  attribution.add_activity(launch(1, 7, 12, 14));  // inside inner
  attribution.add_activity(launch(2, 7, 50, 55));  // inside outer only
  attribution.add_activity(kernel(1, 60));
  attribution.add_activity(kernel(2, 70));
  std::vector<GpuActivity> out;
  attribution.release(200, false, &out);
  const auto m = by_key(out);
  REQUIRE(m.at("api/1") == "inner");
  REQUIRE(m.at("kernel/1") == "inner");
  REQUIRE(m.at("api/2") == "outer");
  REQUIRE(m.at("kernel/2") == "outer");
  REQUIRE(attribution.attributed() == 4);
  REQUIRE(attribution.pending() == 0);
}

TEST_CASE("Work waits for an outer range that closes later, then settles") {
  RangeAttribution attribution({1000, 1000, 1000});
  attribution.add_activity(kernel(3, 120));  // GPU work may arrive before its launch record
  attribution.add_activity(launch(3, 7, 110, 115));
  std::vector<GpuActivity> out;
  attribution.release(200, false, &out);
  REQUIRE(out.empty());  // the range around the launch is still open
  attribution.add_range(7, 100, 300, &kOuter);
  attribution.release(310, false, &out);
  const auto m = by_key(out);
  REQUIRE(m.at("api/3") == "outer");
  REQUIRE(m.at("kernel/3") == "outer");
}

TEST_CASE("Launches outside any range settle without one, at the horizon or at the end") {
  RangeAttribution attribution({100, 1000, 1000});
  attribution.add_activity(launch(4, 7, 500, 510));
  attribution.add_activity(kernel(4, 520));
  std::vector<GpuActivity> out;
  attribution.release(550, false, &out);
  REQUIRE(out.empty());
  attribution.release(700, false, &out);  // 700 - 100 > 510: given up
  REQUIRE(by_key(out).at("kernel/4") == "-");
  REQUIRE(attribution.unattributed() == 2);

  attribution.add_activity(launch(5, 7, 800, 810));
  attribution.release(820, true, &out);  // final: nothing waits
  REQUIRE(by_key(out).at("api/5") == "-");
  REQUIRE(attribution.pending() == 0);
}

TEST_CASE("Calls wait for their thread to become known, and give up at the horizon") {
  RangeAttribution attribution({1000, 1000, 1000});
  attribution.add_range(7, 0, 100, &kOuter);
  GpuActivity call = launch(6, 0, 10, 20);  // os_tid not known yet
  call.thread_id = 0xBEEF;
  attribution.add_activity(call);
  attribution.add_activity(kernel(6, 30));
  std::vector<GpuActivity> out;
  attribution.release(40, false, &out);
  REQUIRE(out.empty());
  attribution.add_thread(0xBEEF, 7);  // its first gpuprobe event was drained
  attribution.release(50, false, &out);
  REQUIRE(by_key(out).at("kernel/6") == "outer");
  for (const GpuActivity& a : out) {
    if (a.kind == GpuActivityKind::kRuntimeApi) REQUIRE(a.os_tid == 7);
  }

  call = launch(8, 0, 2000, 2010);
  call.thread_id = 0xF00D;  // a thread that never records
  attribution.add_activity(call);
  out.clear();
  attribution.release(2500, false, &out);
  REQUIRE(out.empty());
  attribution.release(3100, false, &out);  // past the horizon
  REQUIRE(by_key(out).at("api/8") == "-");
}

TEST_CASE("Calls on a thread with no range open settle at once, without one") {
  RangeAttribution attribution({1'000'000, 1000, 1000});
  attribution.add_range(7, 0, 100, &kOuter);
  attribution.add_activity(launch(9, 7, 200, 210));  // after the only range closed
  attribution.add_activity(kernel(9, 220));
  attribution.add_activity(launch(10, 7, 400, 410));  // after the thread was last seen idle
  std::vector<GpuActivity> out;
  attribution.thread_state(7, /*idle=*/true, 300);
  attribution.release(350, false, &out);
  const auto m = by_key(out);
  REQUIRE(m.at("api/9") == "-");
  REQUIRE(m.at("kernel/9") == "-");
  REQUIRE(m.count("api/10") == 0);  // it ended after the thread was seen idle: not yet known
  attribution.thread_state(7, /*idle=*/false, 500);  // now a range is open: calls wait for it
  attribution.add_activity(launch(11, 7, 510, 520));
  attribution.release(530, false, &out);
  REQUIRE(by_key(out).count("api/11") == 0);
  attribution.add_range(7, 505, 600, &kInner);
  attribution.release(610, false, &out);
  REQUIRE(by_key(out).at("api/11") == "inner");
}

TEST_CASE("Calls from a thread never seen settle at the drain after the one they came in") {
  RangeAttribution attribution({1'000'000, 1000, 1000});
  GpuActivity call = launch(12, 0, 10, 20);
  call.thread_id = 0xCAFE;
  attribution.add_activity(call);
  std::vector<GpuActivity> out;
  attribution.release(30, false, &out);
  REQUIRE(out.empty());
  attribution.release(40, false, &out);
  REQUIRE(by_key(out).at("api/12") == "-");
}

TEST_CASE("Pending activities are bounded") {
  RangeAttribution attribution({1'000'000, 1000, 4});
  for (std::uint32_t c = 1; c <= 10; ++c)
    attribution.add_activity(launch(c, 7, c * 10, c * 10 + 1));
  std::vector<GpuActivity> out;
  attribution.release(200, false, &out);
  REQUIRE(attribution.pending() <= 4);
  REQUIRE(out.size() >= 6);
}

}  // namespace
}  // namespace gpuprobe::gpu
