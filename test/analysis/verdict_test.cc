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

}  // namespace
}  // namespace gpuprobe::analysis
