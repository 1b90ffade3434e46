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
  CHECK(starts(verdict(GpuIdleResult{}, KernelBoundsResult{}, 0, 10'000), "CPU only"));
}

TEST_CASE("a mostly idle GPU whose gaps are host wait: CPU-bound, with the share") {
  const std::string v =
      verdict(one_stream(20, 80 * kMs, 10 * kMs, 10 * kMs), KernelBoundsResult{}, 20 * kMs, 10'000);
  CHECK(starts(v, "CPU-bound"));
  CHECK(v.find("20%") != std::string::npos);
  CHECK(v.find("80%") != std::string::npos);
}

TEST_CASE("tiny kernels most of the GPU time: launch-bound") {
  GpuIdleResult g = one_stream(90, 0, 1, 0);
  g.tiny_kernel_ns = 60 * kMs;
  CHECK(starts(verdict(g, KernelBoundsResult{}, 100 * kMs, 10'000), "launch-bound"));
}

TEST_CASE("by the class that holds most kernel time: communication, memory, compute, else plain") {
  const GpuIdleResult busy = one_stream(95, 0, 1, 0);
  KernelBoundsResult b;
  b.communication_class_ns = 60 * kMs;
  CHECK(starts(verdict(busy, b, 100 * kMs, 10'000), "communication-bound"));
  b = {};
  b.memory_class_ns = 60 * kMs;
  CHECK(starts(verdict(busy, b, 100 * kMs, 10'000), "GPU-bound, mostly memory-bound"));
  b = {};
  b.compute_class_ns = 60 * kMs;
  CHECK(starts(verdict(busy, b, 100 * kMs, 10'000), "GPU-bound, mostly compute-bound"));
  b = {};
  b.compute_class_ns = 40 * kMs;
  b.memory_class_ns = 40 * kMs;
  CHECK(starts(verdict(busy, b, 100 * kMs, 10'000), "GPU-bound: the busiest GPU works 95%"));
}

}  // namespace
}  // namespace gpuprobe::analysis
