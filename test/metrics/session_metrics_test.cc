// The session's metrics from the events of its batches: histograms per range name (bounded),
// steps, GPU kernels and busy time per device, events and drops.
#include "metrics/session_metrics.h"

#include <chrono>
#include <string>
#include <vector>

#include "formats/steps.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe::metrics {
namespace {

using testing::has_line;

constexpr CallSite kRequest{"request", "", "", 0, 0, Category::kApp};
constexpr CallSite kRequestToo{"request", "f", "other.cc", 9, 0, Category::kPython};
constexpr CallSite kDecode{"decode", "", "", 0, 0, Category::kApp};
constexpr CallSite kAnnotation{"gpu_user_annotation", "", "", 0, 0, Category::kCuda};

// One tick is one nanosecond.
const TimeBase kTime(0, 0, 1.0);

Event range(const CallSite& site, std::uint64_t begin, std::uint64_t end) {
  return Event{EventType::kRange, 0, &site, begin, end, 0.0};
}

struct Batch {
  std::vector<Event> events;
  std::vector<ThreadInfo> threads{ThreadInfo{}};
  EventBatch view() const { return EventBatch{events.data(), events.size(), &kTime, &threads}; }
};

TEST_CASE("range durations fall into the 1-2-5 buckets, cumulatively, by name") {
  SessionMetrics m;
  Batch b;
  b.events = {range(kRequest, 0, 15'000),          // 15 us: le 2e-05
              range(kRequestToo, 0, 20'000),       // 20 us exactly: le 2e-05 (upper edges)
              range(kRequest, 0, 300'000'000),     // 0.3 s: le 0.5
              range(kDecode, 0, 1'000),            // 1 us: le 1e-05
              range(kDecode, 0, 200'000'000'000),  // 200 s: only +Inf
              range(kAnnotation, 0, 5'000)};       // read from a trace: not a range metric
  m.add(b.view());
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "# TYPE gpuprobe_range_duration_seconds histogram"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"request\",le=\"1e-05\"} 0"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"request\",le=\"2e-05\"} 2"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"request\",le=\"0.2\"} 2"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"request\",le=\"0.5\"} 3"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"request\",le=\"+Inf\"} 3"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_count{name=\"request\"} 3"));
  CHECK(text.find("\ngpuprobe_range_duration_seconds_sum{name=\"request\"} 0.30003") !=
        std::string::npos);
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"decode\",le=\"1e-05\"} 1"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"decode\",le=\"100\"} 1"));
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_bucket{name=\"decode\",le=\"+Inf\"} 2"));
  CHECK(text.find("gpu_user_annotation") == std::string::npos);
  CHECK(has_line(text, "gpuprobe_events_total 6"));
}

TEST_CASE("names past the cap are counted, not exported") {
  SessionMetrics m(RangeSelection{1, {}});
  Batch b;
  b.events = {range(kRequest, 0, 10), range(kDecode, 0, 10), range(kDecode, 0, 10),
              range(kRequestToo, 0, 10)};  // the same name as an exported one: exported
  m.add(b.view());
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_count{name=\"request\"} 2"));
  CHECK(text.find("name=\"decode\"") == std::string::npos);
  CHECK(has_line(text, "gpuprobe_range_names_overflowed_total 2"));
}

TEST_CASE("metrics_ranges= exports only the names it lists; the others are not overflow") {
  SessionMetrics m(RangeSelection{64, {"decode"}});
  Batch b;
  b.events = {range(kRequest, 0, 10), range(kDecode, 0, 10), range(kDecode, 0, 10)};
  m.add(b.view());
  m.add(b.view());  // the second time from the cache of sites
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_count{name=\"decode\"} 4"));
  CHECK(text.find("name=\"request\"") == std::string::npos);
  CHECK(has_line(text, "gpuprobe_range_names_overflowed_total 0"));
}

TEST_CASE("the memory gauge has the rings, and the flight recorder when it runs") {
  SessionHooks hooks;
  hooks.ring_bytes = [] { return std::uint64_t{3} << 20; };
  hooks.figures = [] {
    FlightFigures f;
    f.enabled = true;
    f.bytes = 12345;
    return f;
  };
  SessionMetrics m;
  m.set_hooks(hooks);
  Batch b;
  b.events = {range(kRequest, 0, 10)};
  m.add(b.view());
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_memory_bytes{part=\"rings\"} 3145728"));
  CHECK(has_line(text, "gpuprobe_memory_bytes{part=\"flight\"} 12345"));
  CHECK(has_line(text, "gpuprobe_dumps_written_total 0"));
}

TEST_CASE("steps have a histogram of their own, whatever their number") {
  SessionMetrics m;
  Batch b;
  for (int i = 0; i < 3; ++i) {
    Event e = range(formats::step_site(), 0, 4'000'000);  // 4 ms
    e.value = i;
    b.events.push_back(e);
  }
  m.add(b.view());
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_step_duration_seconds_bucket{le=\"0.002\"} 0"));
  CHECK(has_line(text, "gpuprobe_step_duration_seconds_bucket{le=\"0.005\"} 3"));
  CHECK(has_line(text, "gpuprobe_step_duration_seconds_count 3"));
  CHECK(text.find("name=\"ProfilerStep") == std::string::npos);  // not a range name
}

TEST_CASE("GPU kernels are counted and busy time counts overlapping work once, per device") {
  std::vector<GpuActivity> work(5);
  const auto set = [](GpuActivity& a, GpuActivityKind kind, std::uint32_t device,
                      std::uint64_t start, std::uint64_t end) {
    a.kind = kind;
    a.device = device;
    a.start = start;
    a.end = end;
  };
  set(work[0], GpuActivityKind::kKernel, 0, 0, 1'000'000);              // 0..1 ms
  set(work[1], GpuActivityKind::kKernel, 0, 500'000, 1'500'000);        // overlaps: +0.5 ms
  set(work[2], GpuActivityKind::kMemcpy, 0, 2'000'000, 2'250'000);      // +0.25 ms, not a kernel
  set(work[3], GpuActivityKind::kRuntimeApi, 0, 3'000'000, 9'000'000);  // an API call: no
  set(work[4], GpuActivityKind::kKernel, 1, 0, 2'000'000);              // device 1: 2 ms
  Batch b;
  for (const GpuActivity& a : work) {
    Event e{EventType::kGpu, 0, nullptr, a.start, a.end, 0.0};
    e.gpu = &a;
    b.events.push_back(e);
  }
  b.threads[0].dropped = 4;
  SessionMetrics m;
  m.add(b.view());
  m.finish(Stats{});
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_gpu_kernels_total{device=\"0\"} 2"));
  CHECK(has_line(text, "gpuprobe_gpu_kernels_total{device=\"1\"} 1"));
  CHECK(has_line(text, "gpuprobe_gpu_busy_seconds_total{device=\"0\"} 0.00175"));
  CHECK(has_line(text, "gpuprobe_gpu_busy_seconds_total{device=\"1\"} 0.002"));
  CHECK(has_line(text, "gpuprobe_events_dropped_total 4"));
  CHECK(has_line(text, "gpuprobe_gpu_sampled 0"));  // recorded all the time
  CHECK(text.find("\ngpuprobe_gpu_recorded_seconds_total ") == std::string::npos);
}

TEST_CASE("with GPU bursts the metrics say they are sampled and for how long GPU work was seen") {
  constexpr CallSite kRecording{kGpuRecordingCounter, "", "", 0, 0, Category::kCuda};
  constexpr CallSite kOther{kGpuRecordingCounter, "", "", 0, 0, Category::kApp};  // not ours
  const auto counter = [](const CallSite& site, std::uint64_t at, double value) {
    return Event{EventType::kCounter, 0, &site, at, at, value};
  };
  Batch b;
  // On for 1 s, off, on for 0.5 s, off: 1.5 s recorded.
  b.events = {counter(kRecording, 0, 1), counter(kRecording, 1'000'000'000, 0),
              counter(kOther, 1'100'000'000, 1), counter(kRecording, 3'000'000'000, 1),
              counter(kRecording, 3'500'000'000, 0)};
  SessionMetrics m;
  m.add(b.view());
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_gpu_sampled 1"));
  CHECK(has_line(text, "gpuprobe_gpu_recorded_seconds_total 1.5"));
  CHECK(has_line(text, "# TYPE gpuprobe_gpu_recorded_seconds_total counter"));

  // A burst still going on counts up to the moment of the scrape.
  Batch open;
  const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  open.events = {counter(kRecording, static_cast<std::uint64_t>(now_ns - 2'000'000'000), 1)};
  m.add(open.view());
  const std::string later = m.exposition();
  const std::size_t at = later.find("\ngpuprobe_gpu_recorded_seconds_total ");
  REQUIRE(at != std::string::npos);
  const double seconds = std::stod(later.substr(at + 37));
  CHECK(seconds >= 3.5);
  CHECK(seconds < 4.5);
}

TEST_CASE("a distributed rank labels every sample") {
  SessionMetrics m;
  m.set_rank(3);
  Batch b;
  b.events = {range(kRequest, 0, 15'000)};
  m.add(b.view());
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_count{rank=\"3\",name=\"request\"} 1"));
  CHECK(has_line(text, "gpuprobe_events_total{rank=\"3\"} 1"));
  CHECK(text.find("\ngpuprobe_events_total 1") == std::string::npos);
}

TEST_CASE("without GPU work there are no GPU metrics") {
  SessionMetrics m;
  const std::string text = m.exposition();
  CHECK(text.find("gpuprobe_gpu_") == std::string::npos);
  CHECK(has_line(text, "gpuprobe_events_total 0"));
}

}  // namespace
}  // namespace gpuprobe::metrics
