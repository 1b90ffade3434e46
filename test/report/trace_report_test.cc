// `gpuprobe report` on traces whose answers are known exactly: GC pauses inside the slowest
// requests, GPU gaps that are host wait, kernel wait or neither, launch delays, tiny kernels,
// and GPU time attributed to the ranges that launched it.
#include "report/trace_report.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe {
namespace {

constexpr std::int64_t kMs = 1'000'000, kUs = 1'000;

// Events in nanoseconds from 0, fed to a TraceReport in one batch.
struct Trace {
  TimeBase time{0, 0, 1.0};
  std::vector<ThreadInfo> threads = std::vector<ThreadInfo>(1);
  std::deque<GpuActivity> gpu;
  std::vector<Event> events;

  void range(const CallSite& site, std::int64_t begin, std::int64_t end) {
    events.push_back(Event{EventType::kRange, 0, &site, static_cast<std::uint64_t>(begin),
                           static_cast<std::uint64_t>(end), 0.0});
  }
  GpuActivity& activity(GpuActivityKind kind, const char* name, std::int64_t start,
                        std::int64_t end) {
    GpuActivity& a = gpu.emplace_back();
    a.kind = kind;
    a.name = name;
    a.start = static_cast<std::uint64_t>(start);
    a.end = static_cast<std::uint64_t>(end);
    return a;
  }
  const report::ReportResult& run(report::ReportOptions options = {}, TraceInfo info = {}) {
    for (const GpuActivity& a : gpu) events.push_back(Event::from_gpu(a));
    threads[0].name = "server";
    // The result points into the report (its name tables): the report lives as long as the trace.
    report = std::make_unique<report::TraceReport>(options);
    REQUIRE(report->open(info).ok());
    REQUIRE(report->write(EventBatch{events.data(), events.size(), &time, &threads}).ok());
    Stats stats;
    stats.threads = threads;
    REQUIRE(report->close(stats, time).ok());
    return report->result();
  }
  std::unique_ptr<report::TraceReport> report;
};

constexpr CallSite kRequest{"request", "", "", 0, 0, Category::kApp};
constexpr CallSite kGcPause{"gc gen2", "", "", 0, 0, Category::kGc};
constexpr CallSite kCompile{"torch.compile 0/1", "", "", 0, 0, Category::kCompile};
constexpr CallSite kForward{"forward", "", "", 0, 0, Category::kApp};

TEST_CASE("three GC pauses inside the three slowest of 1000 requests: GC is named for each") {
  Trace t;
  std::int64_t at = 0;
  for (int i = 0; i < 1000; ++i) {
    // 997 requests of 10 ms; requests 100, 500 and 900 take 40, 50 and 60 ms, and each holds a
    // 30 ms GC pause. Another GC pause and a compile fall between requests.
    const bool slow = i == 100 || i == 500 || i == 900;
    const std::int64_t length = slow ? (i == 100 ? 40 : i == 500 ? 50 : 60) * kMs : 10 * kMs;
    t.range(kRequest, at, at + length);
    if (slow) t.range(kGcPause, at + 5 * kMs, at + 35 * kMs);
    if (i == 300) t.range(kGcPause, at + length + kMs, at + length + 2 * kMs);
    if (i == 700) t.range(kCompile, at + length + kMs, at + length + 3 * kMs);
    at += length + 5 * kMs;
  }
  const report::ReportResult& r = t.run();
  CHECK(r.latency_name == "request");
  REQUIRE(r.outliers.size() == 3);
  const double expected_ms[] = {60, 50, 40};
  for (int i = 0; i < 3; ++i) {
    const report::Outlier& o = r.outliers[i];
    CHECK(o.duration_ns == static_cast<std::int64_t>(expected_ms[i] * kMs));
    CHECK(o.thread == "server");
    REQUIRE(!o.causes.empty());
    CHECK(o.causes[0].cause == "gc pause");
    CHECK(o.causes[0].overlap_ns == 30 * kMs);
    CHECK(o.causes.size() == 1);  // no GPU work in this trace, and nothing else overlaps
  }
  REQUIRE(r.cause_summary.size() == 1);
  CHECK(r.cause_summary[0].cause == "gc pause");
  CHECK(r.cause_summary[0].overlap_ns == 90 * kMs);
  CHECK(r.cause_summary[0].events == 3);
  const report::LatencyRow& request = r.latency[0];
  CHECK(request.name == "request");
  CHECK(request.count == 1000);
  CHECK(request.p50_ms == Approx(10).epsilon(0.02));
  CHECK(request.max_ms == 60);
  CHECK(r.verdict.rfind("CPU only", 0) == 0);
}

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
  const report::ReportResult& r = t.run();
  REQUIRE(r.streams.size() == 2);
  const report::StreamStats& one = r.streams[0];
  CHECK(one.stream == 1);
  CHECK(one.kernels == 100);
  CHECK(one.busy_ns == 100 * 5 * kUs);
  CHECK(one.host_wait_ns == 99 * 13 * kUs);  // launch 10 us after the end, kernel 3 us later
  CHECK(one.kernel_wait_ns == 0);
  CHECK(one.other_idle_ns == 0);
  const report::StreamStats& two = r.streams[1];
  CHECK(two.host_wait_ns == 0);
  CHECK(two.kernel_wait_ns == 8 * 20);
  CHECK(two.other_idle_ns == 50 * kUs);
  CHECK(r.tiny_kernels == 100);
  CHECK(r.launch_delay_p50_us == Approx(1.0).epsilon(0.02));  // 3 us after a 2 us call
  CHECK(r.kernels[0]->name == "big_kernel");
  CHECK(r.gpu_kernel_ns == 100 * 5 * kUs + 10 * 100 * kUs);
}

TEST_CASE("GPU time is attributed to the ranges that launched it; idle GPU explains outliers") {
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
  report::ReportOptions options;
  options.outlier_threshold_ms = 5;  // of 50 forwards, the P99 is the slowest itself
  const report::ReportResult& r = t.run(options);
  REQUIRE(!r.ranges.empty());
  CHECK(r.ranges[0]->name == "forward");
  CHECK(r.ranges[0]->gpu_ns == 50 * kMs);
  CHECK(r.latency_name == "forward");
  REQUIRE(r.outliers.size() == 1);
  REQUIRE(r.outliers[0].causes.size() == 1);
  CHECK(r.outliers[0].causes[0].cause == "GPU idle");
  CHECK(r.outliers[0].causes[0].overlap_ns == 19 * kMs);
}

TEST_CASE("kernels with declared costs on the roofline; copies against the link's peak") {
  Trace t;
  GpuActivity& streaming = t.activity(GpuActivityKind::kKernel, "stream_triad", 0, kMs);
  streaming.declared_bytes = 1e9;  // 1 GB in 1 ms: 1000 GB/s at 1 FLOP/byte
  streaming.declared_flops = 1e9;
  GpuActivity& gemm = t.activity(GpuActivityKind::kKernel, "gemm", 2 * kMs, 3 * kMs);
  gemm.declared_bytes = 1e6;  // 10 TFLOP/s at 10^4 FLOP/byte
  gemm.declared_flops = 1e10;
  t.activity(GpuActivityKind::kKernel, "undeclared", 4 * kMs, 5 * kMs);
  GpuActivity& copy =
      t.activity(GpuActivityKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 6 * kMs, 8 * kMs);
  copy.copy_kind = MemcpyKind::kHtoD;
  copy.bytes = 64'000'000;  // 32 GB/s
  TraceInfo info;
  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  info.devices.push_back(h200);
  const report::ReportResult& r = t.run({}, info);
  CHECK(r.peaks.memory_gbps == 4800);
  REQUIRE(r.roofline.size() == 2);
  const report::RooflineRow& a =
      r.roofline[0].name == "stream_triad" ? r.roofline[0] : r.roofline[1];
  const report::RooflineRow& b = r.roofline[0].name == "gemm" ? r.roofline[0] : r.roofline[1];
  CHECK(a.bound == "memory");
  CHECK(a.achieved_gbps == Approx(1000));
  CHECK(a.percent_of_peak == Approx(100.0 * 1000 / 4800));
  CHECK(b.bound == "compute");
  CHECK(b.achieved_tflops == Approx(10));
  CHECK(b.percent_of_peak == Approx(100.0 * 10 / 67));
  REQUIRE(r.copies.size() == 1);
  CHECK(r.copies[0].kind == "HtoD");
  CHECK(r.copies[0].achieved_gbps == Approx(32));
  CHECK(r.copies[0].peak_gbps == 64);
}

}  // namespace
}  // namespace gpuprobe
