// The verdict is a pure function of the other analyses' results: each branch, from results
// written by hand.
#include "analysis/verdict.h"

#include <string>

#include "support/catch.hpp"

namespace gpuprobe::analysis {
namespace {

constexpr std::int64_t kMs = 1'000'000;

GpuIdleResult one_stream(double busy_percent, std::int64_t host, std::int64_t kernel,
                         std::int64_t other) {
  GpuIdleResult g;
  StreamStats s;
  s.host_wait_ns = host;
  s.kernel_wait_ns = kernel;
  s.other_idle_ns = other;
  g.streams.push_back(s);
  g.device_busy_percent[0] = busy_percent;
  return g;
}

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

TEST_CASE("no GPU work: CPU only") {
  CHECK(starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000),
               "CPU only"));
}

TEST_CASE("a mostly idle GPU whose gaps are host wait: CPU-bound, with the share") {
  const std::string v = verdict(one_stream(20, 80 * kMs, 10 * kMs, 10 * kMs), KernelBoundsResult{},
                                DataLoadingResult{}, 20 * kMs, 10'000);
  CHECK(starts(v, "CPU-bound"));
  CHECK(v.find("20%") != std::string::npos);
  CHECK(v.find("80%") != std::string::npos);
}

TEST_CASE("tiny kernels most of the GPU time: launch-bound") {
  GpuIdleResult g = one_stream(90, 0, 1, 0);
  g.tiny_kernel_ns = 60 * kMs;
  CHECK(starts(verdict(g, KernelBoundsResult{}, DataLoadingResult{}, 100 * kMs, 10'000),
               "launch-bound"));
}

TEST_CASE("a mostly idle GPU of tiny kernels is launch-bound, not CPU-bound, with the numbers") {
  // 10 000 tiny eager kernels: the GPU works 5 % of the time, waiting for the host's launches.
  GpuIdleResult g = one_stream(5, 90 * kMs, 5 * kMs, 0);
  g.tiny_kernel_ns = 5 * kMs;
  g.kernels = 10'000;
  g.kernels_per_second = 100'000;
  g.kernel_p50_us = 0.5;
  g.launch_call_p50_us = 4.2;
  const std::string v = verdict(g, KernelBoundsResult{}, DataLoadingResult{}, 5 * kMs, 10'000);
  CAPTURE(v);
  CHECK(starts(v, "launch-bound (kernels too small): kernels under 10 us take 100% of GPU time"));
  CHECK(v.find("100000 kernels a second, their median 0.5 us on the GPU against 4.2 us to "
               "launch each") != std::string::npos);
  CHECK(v.find("the GPU works 5% of the time, waiting for the next launch") != std::string::npos);
  CHECK(v.find("torch.compile") != std::string::npos);
  CHECK(v.find("CUDA graphs") != std::string::npos);
}

TEST_CASE("by the class that holds most kernel time: communication, memory, compute, else plain") {
  const GpuIdleResult busy = one_stream(95, 0, 1, 0);
  KernelBoundsResult b;
  b.communication_class_ns = 60 * kMs;
  CHECK(starts(verdict(busy, b, DataLoadingResult{}, 100 * kMs, 10'000), "communication-bound"));
  b = {};
  b.memory_class_ns = 60 * kMs;
  CHECK(starts(verdict(busy, b, DataLoadingResult{}, 100 * kMs, 10'000),
               "GPU-bound, mostly memory-bound"));
  b = {};
  b.compute_class_ns = 60 * kMs;
  CHECK(starts(verdict(busy, b, DataLoadingResult{}, 100 * kMs, 10'000),
               "GPU-bound, mostly compute-bound"));
  b = {};
  b.compute_class_ns = 40 * kMs;
  b.memory_class_ns = 40 * kMs;
  CHECK(starts(verdict(busy, b, DataLoadingResult{}, 100 * kMs, 10'000),
               "GPU-bound: the busiest GPU works 95%"));
}

TEST_CASE("a mostly idle GPU waiting on its other streams is named so, not GPU-bound") {
  // Two streams of device 0, 35 % busy: 10 ms of host wait, 70 ms of waits with the next kernel
  // already launched (over 30 us), 20 ms of shorter ones; kernel time mostly GEMMs.
  GpuIdleResult g = one_stream(35, 10 * kMs, 20 * kMs, 70 * kMs);
  StreamStats second;
  second.stream = 2;
  g.streams.push_back(second);
  KernelBoundsResult b;
  b.compute_class_ns = 90 * kMs;
  const std::string v = verdict(g, b, DataLoadingResult{}, 100 * kMs, 10'000);
  CHECK(starts(v,
               "GPU waits on its other streams most of its idle time: the busiest GPU works "
               "35% of the time and 90% of the gaps"));
  CHECK(v.find("70.000 ms of waits over 30 us, 20.000 ms of shorter ones; host wait only 10%") !=
        std::string::npos);
  // One stream: nothing else to wait on; by its kernels' class as before.
  CHECK(starts(verdict(one_stream(35, 10 * kMs, 20 * kMs, 70 * kMs), b, DataLoadingResult{},
                       100 * kMs, 10'000),
               "GPU-bound, mostly compute-bound"));
  // Busy most of the time: GPU-bound, whatever its few gaps wait on.
  GpuIdleResult busy = g;
  busy.device_busy_percent[0] = 80;
  CHECK(starts(verdict(busy, b, DataLoadingResult{}, 100 * kMs, 10'000),
               "GPU-bound, mostly compute-bound"));
  // Host wait most of the idle: still CPU-bound.
  GpuIdleResult host = g;
  host.streams[0].host_wait_ns = 200 * kMs;
  CHECK(starts(verdict(host, b, DataLoadingResult{}, 100 * kMs, 10'000), "CPU-bound"));
}

}  // namespace
}  // namespace gpuprobe::analysis

namespace gpuprobe::analysis {
namespace {

TEST_CASE("steps that wait for data most of their time: data-loading-bound, before all else") {
  // The GPU idles for host wait as a CPU-bound program's does: the data is the cause.
  DataLoadingResult d;
  d.batches = 100;
  d.wait_ns = 800 * kMs;
  d.steps_ns = 1000 * kMs;
  d.share = 0.8;
  d.p50_ms = 8;
  d.p99_ms = 9.5;
  const std::string v = verdict(one_stream(20, 80 * kMs, 10 * kMs, 10 * kMs), KernelBoundsResult{},
                                d, 20 * kMs, 10'000);
  CAPTURE(v);
  CHECK(starts(v,
               "data-loading-bound: the steps wait for their next batch 80% of the time "
               "(100 batches, P50 8.000 ms, P99 9.500 ms each)"));
  CHECK(v.find("num_workers") != std::string::npos);
  CHECK(starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, d, 0, 10'000),
               "data-loading-bound"));  // a CPU-only program too
  d.share = 0.3;                        // a minor part: the usual verdict
  CHECK(starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, d, 0, 10'000), "CPU only"));
}

TEST_CASE(
    "a trace spent mostly compiling: compile-bound, with the guards that failed and the fix") {
  CompileResult c;
  c.compiles = 9;
  c.compile_ns = 900 * kMs;
  c.base_ns = 100 * kMs;
  for (int i = 1; i <= 8; ++i)
    c.recompiles.push_back("0/" + std::to_string(i) + ": tensor 'x' size mismatch at index 0");
  c.limit_hits.push_back("recompile limit hit: torch._dynamo hit config.recompile_limit (8)");
  const std::string v =
      verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000, &c);
  CHECK(starts(v, "compile-bound: torch.compile compiled for 90% of the trace (9 compiles)"));
  CHECK(v.find("8 recompiles, 8 of them size guards: the input shapes drift") != std::string::npos);
  CHECK(v.find("the recompile limit was hit 1 time and") != std::string::npos);
  c.compile_ns = 400 * kMs;  // less than half: the other verdicts
  c.base_ns = 600 * kMs;
  CHECK(starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000, &c),
               "CPU only"));
}

// A bucketed compile: 3 input shapes, so 2 recompiles for size, all in the first requests; then
// none for the rest of the run.
CompileResult bucketed_warmup() {
  CompileResult c;
  c.compiles = 3;
  c.compile_ns = 900 * kMs;
  c.base_ns = 100 * kMs;
  c.recompiles = {"0/1: tensor 'input_ids' size mismatch at index 1. expected 64, actual 32",
                  "0/2: tensor 'input_ids' size mismatch at index 1. expected 32, actual 16"};
  c.after_last_compile = 0.95;
  return c;
}

TEST_CASE("a healthy bucketed compile is warm-up, not compile-bound, and no padding is advised") {
  const CompileResult c = bucketed_warmup();
  const std::string v =
      verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000, &c);
  CHECK(starts(v,
               "compile warm-up, not compile-bound: 3 compiles (2 recompiles) took 90% of "
               "the trace, then stopped: 95% of the time outside compiles came after the "
               "last one"));
  CHECK(v.find("compile-bound: torch.compile") == std::string::npos);
  CHECK(v.find("pad inputs") == std::string::npos);
  CHECK(v.find("; CPU only: no GPU activity in this trace") != std::string::npos);
  CHECK(compile_bound_verdict(c).empty());
  CompileResult runs = c;  // with runs of the compiled code, the share is theirs
  runs.runs = 500;
  CHECK(compile_warmup_verdict(runs).find("then stopped: 95% of the 500 runs of compiled code "
                                          "came after the last one") != std::string::npos);
}

TEST_CASE("compiles that go on late, a limit hit or many recompiles stay compile-bound") {
  CompileResult late = bucketed_warmup();
  late.after_last_compile = 0.2;  // still compiling in the last part of the run
  CHECK(
      starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000, &late),
             "compile-bound: torch.compile compiled for 90% of the trace (3 compiles); 2 "
             "recompiles, 2 of them size guards: the input shapes drift"));
  CompileResult limit = bucketed_warmup();
  limit.limit_hits.push_back("torch._dynamo hit config.recompile_limit (8)");
  CHECK(starts(compile_bound_verdict(limit), "compile-bound"));
  CompileResult storm = bucketed_warmup();
  for (int i = 3; i <= 8; ++i) storm.recompiles.push_back("0/" + std::to_string(i) + ": size");
  CHECK(starts(compile_bound_verdict(storm), "compile-bound"));
  CompileResult unknown = bucketed_warmup();  // when the compiles ended is not known: as before
  unknown.after_last_compile = -1;
  CHECK(starts(compile_bound_verdict(unknown), "compile-bound"));
  CHECK(compile_warmup_verdict(unknown).empty());
}

// 500 requests, the 3 slowest each holding a 150 ms gen2 collection.
JitterResult gc_outliers() {
  JitterResult j;
  j.latency_name = "request";
  j.latency_count = 500;
  j.outlier_threshold_ms = 2.5;
  j.latency_p50_ms = 1;
  j.outliers.resize(3);
  j.excess_ns = 450 * kMs;
  CauseOverlap gc{"gc pause", 450 * kMs, 3, 450 * kMs, "gc gen2 x3"};
  CauseOverlap gap{"CPU gap", 20 * kMs, 1, 20 * kMs, ""};
  j.cause_summary = {gc, gap};
  return j;
}

TEST_CASE("latency outliers' largest cause leads the verdict, whatever the device") {
  const JitterResult j = gc_outliers();
  const std::string v =
      verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000, nullptr, &j);
  CHECK(v ==
        "latency outliers: 3 of 500 \"request\" ranges over their P99 (2.500 ms), 450.000 ms "
        "above the median in all, 100% of it in GC pauses (gc gen2 x3); CPU only: no GPU activity "
        "in this trace");
  // On a GPU-bound trace the device part follows the same way.
  const std::string g = verdict(one_stream(95, kMs, kMs, kMs), KernelBoundsResult{},
                                DataLoadingResult{}, 100 * kMs, 10'000, nullptr, &j);
  CHECK(starts(g, "latency outliers: 3 of 500"));
  CHECK(g.find("; GPU-bound") != std::string::npos);
  // Compile-bound ends it, after the outliers.
  CompileResult storm = bucketed_warmup();
  storm.after_last_compile = 0.1;
  const std::string c =
      verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000, &storm, &j);
  CHECK(c.find("GC pauses (gc gen2 x3); compile-bound: ") != std::string::npos);
  CHECK(c.find("CPU only") == std::string::npos);
}

TEST_CASE("no outliers, or none explained: the verdict says so or stays the device's") {
  JitterResult none;
  none.latency_name = "request";
  CHECK(starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, DataLoadingResult{}, 0, 10'000,
                       nullptr, &none),
               "CPU only"));
  JitterResult tail = gc_outliers();  // the usual tail, 1.5 times the median: not a stall
  tail.excess_ns = 3 * kMs / 2;
  tail.latency_p50_ms = 1;
  CHECK(latency_verdict(tail).empty());
  JitterResult unexplained = gc_outliers();
  unexplained.cause_summary[0].explained_ns = kMs;
  unexplained.cause_summary[1].explained_ns = kMs;
  unexplained.threshold_given = true;
  CHECK(starts(latency_verdict(unexplained),
               "latency outliers: 3 of 500 \"request\" ranges over 2.500 ms, 450.000 ms above the "
               "median in all: no recorded cause explains them"));
}

}  // namespace
}  // namespace gpuprobe::analysis
