// GPU idle: busy time, and each gap before a kernel classified as host wait, kernel wait or other.
#include "analysis/gpu_idle.h"

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("a stream whose kernels wait on late launches is host-bound") {
  Trace t;
  // Stream 1: 100 kernels of 5 us, each launched 10 us after the previous one ended (the host
  // is late): every gap is host wait. Stream 2: kernels queued ahead (launches long before),
  // 20 ns gaps (kernel wait: under 30 us) and one 50 us gap (other). Launch calls last 2 us.
  std::uint32_t correlation = 1;
  std::int64_t at = 0;
  for (int i = 0; i < 100; ++i) {
    const std::int64_t launch = at;
    GpuActivity& call =
        t.activity(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", launch, launch + 2 * kUs);
    call.correlation = correlation;
    call.os_tid = 1;
    GpuActivity& k =
        t.activity(GpuActivityKind::kKernel, "small_kernel", launch + 3 * kUs, launch + 8 * kUs);
    k.stream = 1;
    k.correlation = correlation++;
    at = launch + 8 * kUs + 10 * kUs;
  }
  std::int64_t s2 = 0;
  for (int i = 0; i < 10; ++i) {
    GpuActivity& call =
        t.activity(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", i * 100, i * 100 + 50);
    call.correlation = correlation;
    const std::int64_t gap = i == 5 ? 50 * kUs : 20;
    s2 += i == 0 ? 10 * kUs : gap;
    GpuActivity& k = t.activity(GpuActivityKind::kKernel, "big_kernel", s2, s2 + 100 * kUs);
    k.stream = 2;
    k.correlation = correlation++;
    s2 += 100 * kUs;
  }
  const analysis::ReportResult& report = t.run();
  const analysis::GpuIdleResult& r = report.gpu;
  REQUIRE(r.streams.size() == 2);
  const analysis::StreamStats& one = r.streams[0];
  CHECK(one.stream == 1);
  CHECK(one.kernels == 100);
  CHECK(one.busy_ns == 100 * 5 * kUs);
  CHECK(one.host_wait_ns == 99 * 13 * kUs);  // launch 10 us after the end, kernel 3 us later
  CHECK(one.kernel_wait_ns == 0);
  CHECK(one.other_idle_ns == 0);
  const analysis::StreamStats& two = r.streams[1];
  CHECK(two.host_wait_ns == 0);
  CHECK(two.kernel_wait_ns == 8 * 20);
  CHECK(two.other_idle_ns == 50 * kUs);
  CHECK(r.tiny_kernels == 100);
  CHECK(r.tiny_kernel_ns == 100 * 5 * kUs);
  CHECK(r.launches == 110);
  CHECK(r.launch_delay_p50_us == Approx(1.0).epsilon(0.02));  // 3 us after a 2 us call
  // Device 0 works whenever either stream does; the timeline says so slice by slice.
  const double span = static_cast<double>(report.end_ns - report.start_ns);
  const double busy_ns = 10 * 100 * kUs + 100 * 5 * kUs;  // the streams overlap only at the start
  CHECK(r.device_busy_percent.at(0) <= 100.0 * busy_ns / span + 1e-9);
  CHECK(r.device_busy_percent.at(0) > 0);
  REQUIRE(r.busy_timeline.size() == 100);
  for (double slice : r.busy_timeline) CHECK(slice <= 100.0 + 1e-9);
}

TEST_CASE("copies and sets occupy a stream; a trace with no GPU work has no streams") {
  Trace t;
  t.range(kRequest, 0, kMs);
  CHECK(t.run().gpu.streams.empty());
  Trace u;
  GpuActivity& copy = u.activity(GpuActivityKind::kMemcpy, "Memcpy HtoD", 0, 10 * kUs);
  copy.stream = 3;
  GpuActivity& set = u.activity(GpuActivityKind::kMemset, "Memset", 20 * kUs, 30 * kUs);
  set.stream = 3;
  const analysis::GpuIdleResult& r = u.run().gpu;
  REQUIRE(r.streams.size() == 1);
  CHECK(r.streams[0].copies == 2);
  CHECK(r.streams[0].kernels == 0);
  CHECK(r.streams[0].busy_ns == 20 * kUs);
  CHECK(r.device_busy_percent.at(0) == Approx(100.0 * 20 / 30));
}

TEST_CASE("with GPU bursts, busy is of the recorded time and gaps between bursts are not idle") {
  // Recorded [0, 10) ms and [50, 60) ms (the trace's GPU recording counter); a 5 ms kernel in
  // each burst, launched long before (queued). The 45 ms between them is no one's idle time.
  static constexpr CallSite kRecording{kGpuRecordingCounter, "", "", 0, 0, Category::kCuda};
  Trace t;
  const auto recording = [&](std::int64_t at, bool on) {
    t.events.push_back(Event{EventType::kCounter, 0, &kRecording, static_cast<std::uint64_t>(at),
                             static_cast<std::uint64_t>(at), on ? 1.0 : 0.0});
  };
  recording(0, true);
  recording(10 * kMs, false);
  recording(50 * kMs, true);
  recording(60 * kMs, false);
  for (std::int64_t start : {2 * kMs, 52 * kMs}) {
    GpuActivity& k = t.activity(GpuActivityKind::kKernel, "k", start, start + 5 * kMs);
    k.stream = 7;
  }
  const analysis::GpuIdleResult& r = t.run().gpu;
  CHECK(r.sampled);
  CHECK(r.recorded_ns == 20 * kMs);
  CHECK(r.device_busy_percent.at(0) == Approx(50.0));  // 10 of 20 ms recorded, not 10 of 60
  REQUIRE(r.streams.size() == 1);
  CHECK(r.streams[0].other_idle_ns == 0);
  CHECK(r.streams[0].host_wait_ns == 0);

  // A window that starts inside a burst: its first switch is an off.
  Trace u;
  u.events.push_back(Event{EventType::kCounter, 0, &kRecording, 4 * kMs, 4 * kMs, 0.0});
  u.activity(GpuActivityKind::kKernel, "k", 0, 2 * kMs);
  u.activity(GpuActivityKind::kKernel, "k", 3 * kMs, 4 * kMs);
  const analysis::GpuIdleResult& v = u.run().gpu;
  CHECK(v.recorded_ns == 4 * kMs);
  CHECK(v.device_busy_percent.at(0) == Approx(75.0));
  CHECK(v.streams[0].other_idle_ns == kMs);  // inside the burst: a real gap
}

TEST_CASE("without the recording counter the GPU is not sampled") {
  Trace t;
  t.activity(GpuActivityKind::kKernel, "k", 0, kMs);
  const analysis::GpuIdleResult& r = t.run().gpu;
  CHECK_FALSE(r.sampled);
  CHECK(r.recorded_ns == 0);
}

TEST_CASE("a stream's queued wait names the other stream's kernel it waited behind") {
  Trace t;
  // 20 rounds of 1 ms: "producer" runs 200 us on stream 1; "consumer" on stream 2 and
  // "also_waiting" on stream 3, both launched long before, wait for it (an event) and start 5 us
  // after it ends — each the other's fellow waiter, which ends after it began. Launch calls come
  // first.
  std::uint32_t correlation = 1;
  std::int64_t at = 0;
  for (int i = 0; i < 20; ++i) {
    const auto queued = [&](const char* name, std::uint32_t stream, std::int64_t begin,
                            std::int64_t end) {
      GpuActivity& call = t.activity(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", 0, 10);
      call.correlation = correlation;
      GpuActivity& k = t.activity(GpuActivityKind::kKernel, name, begin, end);
      k.stream = stream;
      k.correlation = correlation++;
    };
    queued("producer", 1, at + 10 * kUs, at + 210 * kUs);
    queued("consumer", 2, at + 215 * kUs, at + 265 * kUs);
    queued("also_waiting", 3, at + 215 * kUs, at + 300 * kUs);
    at += 1000 * kUs;  // the device idles most of the time
  }
  const analysis::ReportResult& report = t.run();
  REQUIRE(report.gpu.streams.size() == 3);
  // The producer's own waits (queued long before, nothing ending near its start) are unexplained.
  CHECK(report.gpu.streams[0].waited_behind.empty());
  CHECK(report.gpu.streams[0].unexplained_wait_ns == report.gpu.streams[0].other_idle_ns);
  for (std::size_t s = 1; s < 3; ++s) {
    const analysis::StreamStats& waiting = report.gpu.streams[s];
    REQUIRE(waiting.waited_behind.size() == 1);
    CHECK(waiting.waited_behind[0].name == "producer");
    CHECK(waiting.waited_behind[0].stream == 1);
    CHECK(waiting.waited_behind[0].waits == 19);  // each round's but the first
    CHECK(waiting.waited_behind[0].wait_ns == waiting.other_idle_ns);
    CHECK(waiting.unexplained_wait_ns == 0);
  }
  CHECK(report.verdict.find("waited longest behind producer on stream 1") != std::string::npos);
}

}  // namespace
}  // namespace gpuprobe::test
