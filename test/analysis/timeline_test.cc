// The timeline (the report page's data) on traces whose answers are known exactly.
#include "analysis/timeline.h"

#include <nlohmann/json.hpp>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

analysis::ReportOptions with_timeline() {
  analysis::ReportOptions o;
  o.timeline = true;
  return o;
}

constexpr CallSite kBreak{"graph break: call_function print", "", "", 0, 0, Category::kCompile};

TEST_CASE("every request, rolling quantiles that follow a slowdown, marks and GPU per device") {
  Trace t;
  // 1000 requests of 10 ms, then 1000 of 30 ms, back to back; two GC pauses and a compile among
  // them, 5 graph breaks; GPU 0 busy through the first half, GPU 1 through the second.
  std::int64_t at = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t length = (i < 1000 ? 10 : 30) * kMs;
    t.range(kRequest, at, at + length);
    if (i == 100 || i == 1500) t.range(kGcPause, at + kMs, at + 3 * kMs);
    if (i == 1000) t.range(kCompile, at, at + 5 * kMs);
    if (i == 1000 + 10) {
      for (int b = 0; b < 5; ++b)
        t.events.push_back(
            Event{EventType::kInstant, 0, &kBreak, static_cast<std::uint64_t>(at + b), 0, 0.0});
    }
    at += length;
  }
  t.activity(GpuActivityKind::kKernel, "a", 0, 10'000 * kMs).device = 0;
  t.activity(GpuActivityKind::kKernel, "b", 10'000 * kMs, at).device = 1;
  const analysis::ReportResult& report = t.run(with_timeline());
  const analysis::TimelineResult& r = report.timeline;
  CHECK(r.latency_name == "request");
  CHECK(r.instances == 2000);
  CHECK(r.stride == 1);
  REQUIRE(r.points.size() == 2000);
  CHECK(r.points[0].begin == 0);
  CHECK(r.points[1999].end - r.points[1999].begin == 30 * kMs);
  // A fiftieth of 40 s is 800 ms: 80 requests of 10 ms or 26 of 30 ms per window.
  CHECK(r.window_ns == 800 * kMs);
  REQUIRE(r.rolling.size() > 350);
  for (const auto& s : r.rolling) {
    if (s.at_ns < 10'000 * kMs) {
      CHECK(s.p50_ms == 10);
      CHECK(s.p99_ms == 10);
    } else if (s.at_ns >= 10'000 * kMs + r.window_ns) {
      CHECK(s.p50_ms == 30);
    }
  }
  CHECK(r.marks.at("gc pause").size() == 2);
  CHECK(r.marks.at("compile").size() == 1);
  CHECK(r.marks.at("graph break").size() == 5);
  CHECK(r.marks.count("allocator") == 0);
  CHECK(r.marks_left_out == 0);
  const auto& busy = report.gpu.device_busy_timeline;
  REQUIRE(busy.size() == 2);
  REQUIRE(busy.at(0).size() == analysis::Timeline::kGpuBins);
  CHECK(busy.at(0).front() == Approx(100));
  CHECK(busy.at(0).back() == Approx(0));
  CHECK(busy.at(1).front() == Approx(0));
  CHECK(busy.at(1).back() == Approx(100));
  // In the JSON: compact rows in milliseconds from the trace's start.
  const nlohmann::json j = nlohmann::json::parse(t.report->json());
  CHECK(j["timeline"]["points"].size() == 2000);
  CHECK(j["timeline"]["points"][1][0] == 10.0);
  CHECK(j["timeline"]["points"][1][1] == 10.0);
  CHECK(j["timeline"]["marks"]["gc pause"][0][1] == 2.0);
  CHECK(j["gpu"]["device_busy_timeline_percent"]["1"].size() == analysis::Timeline::kGpuBins);
}

TEST_CASE("past the cap, every 2^k-th instance of the whole run is kept, and the page is told") {
  Trace t;
  const int n = 500'000;
  for (int i = 0; i < n; ++i) t.range(kRequest, i * 2 * kUs, i * 2 * kUs + kUs + (i % 7));
  const analysis::TimelineResult& r = t.run(with_timeline()).timeline;
  CHECK(r.instances == static_cast<std::uint64_t>(n));
  CHECK(r.stride == 4);  // thinned at 200,001 and again at 400,001 kept-and-seen
  REQUIRE(r.points.size() == static_cast<std::size_t>(n / 4));
  for (std::size_t k = 0; k < r.points.size(); k += 997)
    CHECK(r.points[k].begin == static_cast<std::int64_t>(k) * 4 * 2 * kUs);  // instance 4k
}

TEST_CASE("marks past the cap keep the longest, counted") {
  Trace t;
  const int calls = static_cast<int>(analysis::Timeline::kMarksPerKind) + 500;
  for (int i = 0; i < 30; ++i) t.range(kRequest, i * kMs, (i + 1) * kMs);
  for (int i = 0; i < calls; ++i) {
    // Every 100th call lasts 50 us, the others 1 us; all apart.
    t.activity(GpuActivityKind::kRuntimeApi, "cudaMalloc", i * 100 * kUs,
               i * 100 * kUs + (i % 100 == 0 ? 50 : 1) * kUs);
  }
  const analysis::TimelineResult& r = t.run(with_timeline()).timeline;
  const auto& marks = r.marks.at("allocator");
  CHECK(marks.size() == analysis::Timeline::kMarksPerKind);
  CHECK(r.marks_left_out == 500);
  int long_ones = 0;
  for (std::size_t i = 0; i < marks.size(); ++i) {
    if (marks[i].end - marks[i].begin == 50 * kUs) ++long_ones;
    if (i > 0) CHECK(marks[i - 1].begin < marks[i].begin);  // back in time order
  }
  CHECK(long_ones == (calls + 99) / 100);
}

TEST_CASE("the chooser's other ranges: instances, rolling quantiles, median, outliers explained") {
  Trace t;
  // 1000 requests of 10 ms, each with a 5 ms "compute"; compute 500 takes 30 ms, a GC pause and
  // a 20 ms "launch" inside it. Then nothing for as long again, and 100 more requests: the
  // rolling samples stop in between.
  std::int64_t at = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t slow = i == 500 ? 25 * kMs : 0;
    t.range(kRequest, at, at + 10 * kMs + slow);
    t.range(kCompute, at + kMs, at + 6 * kMs + slow);
    t.range(kLaunch, at + 2 * kMs, at + 3 * kMs + (i == 500 ? 20 * kMs : 0));
    if (i == 500) t.range(kGcPause, at + 2 * kMs, at + 4 * kMs);
    at += 10 * kMs + slow;
  }
  for (int i = 0; i < 100; ++i)
    t.range(kRequest, 2 * at + i * 10 * kMs, 2 * at + (i + 1) * 10 * kMs);
  const analysis::TimelineResult& r = t.run(with_timeline()).timeline;
  CHECK(r.latency_name == "request");
  CHECK(r.p50_ms == Approx(10).epsilon(0.02));
  CHECK(r.rolling_every_ns == (2 * at + 1000 * kMs) / analysis::Timeline::kRollingSamples);
  // No sample in the gap past the window: the page breaks its lines there.
  std::int64_t longest = 0;
  for (std::size_t i = 1; i < r.rolling.size(); ++i)
    longest = std::max(longest, r.rolling[i].at_ns - r.rolling[i - 1].at_ns);
  CHECK(longest > at - r.window_ns - r.rolling_every_ns);

  REQUIRE(r.others.size() == 2);  // compute and launch
  const analysis::RangeOverTime& compute = r.others[0];
  CHECK(compute.name == "compute");
  CHECK(compute.instances == 1000);
  CHECK(compute.stride == 1);
  CHECK(compute.points.size() == 1000);
  CHECK(compute.p50_ms == Approx(5).epsilon(0.02));
  CHECK(!compute.rolling.empty());
  CHECK(compute.outliers.threshold_ms == Approx(5));
  REQUIRE(compute.outliers.outliers.size() == 1);
  const analysis::Outlier& o = compute.outliers.outliers[0];
  CHECK(o.duration_ns == 30 * kMs);
  CHECK(o.thread == "server");
  REQUIRE(!o.causes.empty());
  CHECK(o.causes[0].cause == "gc pause");
  CHECK(o.causes[0].overlap_ns == 2 * kMs);
  REQUIRE(o.children.size() == 1);
  CHECK(o.children[0].name == "launch");
  CHECK(r.others[1].name == "launch");
  const nlohmann::json j = nlohmann::json::parse(t.report->json())["timeline"];
  CHECK(j["others"][0]["range"] == "compute");
  CHECK(j["others"][0]["points"].size() == 1000);
  CHECK(j["others"][0]["outliers"][0]["duration_ms"] == 30.0);
  CHECK(j["others"][0]["outliers"][0]["children"][0]["name"] == "launch");
  CHECK(j["rolling_every_ms"] > 0);
}

TEST_CASE("another range past kChoicePoints is thinned to every 2^k-th instance") {
  Trace t;
  for (int i = 0; i < 50; ++i) t.range(kRequest, i * 10 * kMs, i * 10 * kMs + 9 * kMs);
  for (int i = 0; i < 50'000; ++i) t.range(kParse, i * 10 * kUs, i * 10 * kUs + kUs);
  const analysis::TimelineResult& r = t.run(with_timeline()).timeline;
  REQUIRE(!r.others.empty());
  const analysis::RangeOverTime& parse = r.others[0].name == "parse" ? r.others[0] : r.others.at(1);
  CHECK(parse.instances == 50'000);
  CHECK(parse.stride == 4);
  REQUIRE(parse.points.size() == 12'500);
  CHECK(parse.points[1].begin == 4 * 10 * kUs);
}

TEST_CASE("without the option there is no timeline, and --json has none") {
  Trace t;
  for (int i = 0; i < 100; ++i) t.range(kRequest, i * kMs, (i + 1) * kMs);
  t.activity(GpuActivityKind::kKernel, "a", 0, kMs);
  const analysis::ReportResult& report = t.run();
  CHECK(report.timeline.points.empty());
  CHECK(report.gpu.device_busy_timeline.empty());
  const nlohmann::json j = nlohmann::json::parse(t.report->json());
  CHECK(!j.contains("timeline"));
  CHECK(!j["gpu"].contains("device_busy_timeline_percent"));
}

}  // namespace
}  // namespace gpuprobe::test
