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
  const report::ReportResult& run(report::ReportOptions options = {}, TraceInfo info = {},
                                  Stats stats = {}) {
    for (const GpuActivity& a : gpu) events.push_back(Event::from_gpu(a));
    threads[0].name = "server";
    // The result points into the report (its name tables): the report lives as long as the trace.
    report = std::make_unique<report::TraceReport>(options);
    REQUIRE(report->open(info).ok());
    REQUIRE(report->write(EventBatch{events.data(), events.size(), &time, &threads}).ok());
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
constexpr CallSite kParse{"parse", "", "", 0, 0, Category::kApp};
constexpr CallSite kCompute{"compute", "", "", 0, 0, Category::kApp};
constexpr CallSite kLaunch{"launch", "", "", 0, 0, Category::kApp};
constexpr CallSite kGraphRun{"compiled graph (forward)", "", "", 0, 0, Category::kTorch};
constexpr CallSite kFrameRun{"Torch-Compiled Region: 0/0", "", "", 0, 0, Category::kApp};
constexpr CallSite kStep{"ProfilerStep", "", "", 0, 0, Category::kStep};
constexpr CallSite kSpeedup{"compile speedup", "", "", 0, 0, Category::kCompile};

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
  const report::LatencyRow& request = r.latency[0];
  CHECK(request.name == "request");
  CHECK(request.count == 1000);
  CHECK(request.p50_ms == Approx(10).epsilon(0.02));
  CHECK(request.max_ms == 60);
  CHECK(r.verdict.rfind("CPU only", 0) == 0);
}

// CUPTI counts a record it could not store for want of a buffer among its dropped records; the
// refused requests say why. Adding the two counted every such loss twice.
TEST_CASE("GPU records lost are CUPTI's dropped count, never plus the refused buffer requests") {
  Trace t;
  t.range(kRequest, 0, kMs);
  Stats stats;
  stats.gpu.dropped = 330;
  stats.gpu.buffers_exhausted = 330;
  REQUIRE(t.run({}, {}, stats).gpu_dropped == 330);
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

// 1000 requests of 10 ms: parse [0, 3) ms, compute [3, 9) ms holding launch [4, 5) ms, 1 ms of the
// request's own code. Requests 200, 400 and 600 also spend 25 ms between parse and compute in
// code with no range (a CPU gap); each order a trace may deliver ranges in gives the same answer.
void requests_with_gaps(Trace& t, bool children_first) {
  std::int64_t at = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t gap = i == 200 || i == 400 || i == 600 ? 25 * kMs : 0;
    const std::int64_t c = at + 3 * kMs + gap;
    if (!children_first) t.range(kRequest, at, c + 7 * kMs);
    t.range(kParse, at, at + 3 * kMs);
    if (!children_first) t.range(kCompute, c, c + 6 * kMs);
    t.range(kLaunch, c + kMs, c + 2 * kMs);
    if (children_first) t.range(kCompute, c, c + 6 * kMs);
    if (children_first) t.range(kRequest, at, c + 7 * kMs);
    at = c + 8 * kMs;
  }
}

TEST_CASE("time a slow request spent outside its child ranges is named a CPU gap") {
  for (const bool children_first : {false, true}) {
    CAPTURE(children_first);
    Trace t;
    requests_with_gaps(t, children_first);
    const report::ReportResult& r = t.run();
    std::int64_t request_self = 0, compute_self = 0, launch_self = 0;
    for (const report::NameStats* s : r.ranges) {
      if (s->name == "request") request_self = s->self_ns;
      if (s->name == "compute") compute_self = s->self_ns;
      if (s->name == "launch") launch_self = s->self_ns;
    }
    CHECK(request_self == 1000 * kMs + 3 * 25 * kMs);
    CHECK(compute_self == 1000 * 5 * kMs);
    CHECK(launch_self == 1000 * kMs);
    CHECK(r.latency_name == "request");
    REQUIRE(r.outliers.size() == 3);
    for (const report::Outlier& o : r.outliers) {
      CHECK(o.duration_ns == 35 * kMs);
      REQUIRE(o.causes.size() == 1);
      CHECK(o.causes[0].cause == "CPU gap");
      CHECK(static_cast<double>(o.causes[0].overlap_ns) == Approx(25.0 * kMs).epsilon(0.02));
    }
  }
}

TEST_CASE("compiled runs give m, T_execute, B, the compiled share and Amdahl's bound") {
  Trace t;
  // A 100 ms compile, then 10 steps of 10 ms, each running a 4 ms compiled graph inside a 5 ms
  // Dynamo frame; compare() measured S = 2.
  t.range(kCompile, 0, 100 * kMs);
  for (int i = 0; i < 10; ++i) {
    const std::int64_t at = (100 + 10 * i) * kMs;
    t.range(kStep, at, at + 10 * kMs);
    t.range(kFrameRun, at + kMs, at + 6 * kMs);
    t.range(kGraphRun, at + 2 * kMs, at + 6 * kMs);
  }
  t.events.push_back(Event{EventType::kCounter, 0, &kSpeedup, 200 * kMs, 200 * kMs, 2.0});
  const report::ReportResult::Compile& c = t.run().compile;
  CHECK(c.compiles == 1);
  CHECK(c.runs == 10);  // the graph runs, not the frames that hold them
  CHECK(c.run_ns == 40 * kMs);
  CHECK(c.base_ns == 100 * kMs);
  CHECK(c.amortised_ms == Approx(10));
  CHECK(c.share == Approx(0.4));
  CHECK(c.amdahl_bound == Approx(1 / 0.6));
  CHECK(c.program_speedup == Approx(0.6 + 0.4 * 2));
  CHECK(c.break_even_runs == Approx(100.0 / (4 * (2 - 1))));
}

TEST_CASE("kernel names tell compute-, memory-bound and communication kernels apart") {
  const std::pair<const char*, const char*> kKernels[] = {
      {"ampere_sgemm_128x64_nn", "compute"},
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32", "compute"},
      {"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>", "compute"},
      {"flash_fwd_kernel", "compute"},
      {"triton_tem_fused_mm_0", "compute"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
       "memory"},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", "memory"},
      {"triton_poi_fused_add_relu_0", "memory"},
      {"triton_red_fused_sum_1", "memory"},
      {"void gemv2T_kernel_val<int, int, float, float, float, 128, 16>", "memory"},
      {"void at::native::unrolled_elementwise_kernel<convert_float_to_half>", "memory"},
      {"void at::native::cunn_SoftMaxForward<4, float>", "memory"},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "communication"},
      {"layer_kernel(float*, int, float)", ""},
  };
  for (const auto& [name, expected] : kKernels) {
    CAPTURE(name);
    CHECK(report::kernel_class_from_name(name) == expected);
  }
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
