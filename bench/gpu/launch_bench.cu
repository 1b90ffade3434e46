// The cost CUPTI tracing adds to a kernel launch, in one run, for an empty kernel launched back
// to back (the CPU-bound case where tracing costs most):
//   bare                     no tracing
//   raw CUPTI kernel[+rt]    the floor: raw_cupti_floor.cc with the same activity kinds
//   gpuprobe kernel[+rt]     Session("cupti=kernel[+runtime]")
//   bare after stop          no tracing, after the sessions stopped (CUPTI finalized)
// plus 1 M launches at full rate with default buffers, counting kernel records.
// Prints one line per case with us/launch and the cost added over bare; exits non-zero if a
// target is missed (added cost > 1.15x the floor's, lost kernels, after-stop > 2% slower).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "raw_cupti_floor.h"

__global__ void empty_kernel() {}

namespace {

constexpr int kLaunches = 200000;
constexpr int kWarmup = 20000;
constexpr int kRepeats = 7;

void check(cudaError_t e) {
  if (e != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(e));
    std::exit(1);
  }
}

void launch(int n) {
  for (int i = 0; i < n; ++i) empty_kernel<<<1, 1>>>();
  check(cudaDeviceSynchronize());
}

// Microseconds per launch over `n` launches and a sync, after a warm-up that lets CUPTI finish
// instrumenting (its first launches are much slower and are not what a long run pays).
double time_launches(int n) {
  launch(kWarmup);
  const auto t0 = std::chrono::steady_clock::now();
  launch(n);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Counts kernel records reaching the sinks.
class KernelCounter : public gpuprobe::Sink {
 public:
  gpuprobe::Status open(const gpuprobe::TraceInfo&) override { return {}; }
  gpuprobe::Status write(const gpuprobe::EventBatch& batch) override {
    for (const gpuprobe::Event& e : batch) {
      kernels +=
          e.type == gpuprobe::EventType::kGpu && e.gpu->kind == gpuprobe::GpuActivityKind::kKernel;
    }
    return {};
  }
  gpuprobe::Status close(const gpuprobe::Stats&, const gpuprobe::TimeBase&) override { return {}; }
  std::uint64_t kernels = 0;
};

// One way of running the launches: how tracing starts, and how it stops (returning the kernel
// records it saw).
struct Variant {
  std::string name;
  std::function<void()> start;
  std::function<std::uint64_t()> stop;
  std::vector<double> us;
  std::uint64_t kernels = 0;
};

Variant bare(const char* name) {
  return {name, [] {}, [] { return std::uint64_t{0}; }};
}

Variant raw(const char* name, raw_cupti::Options options) {
  return {name,
          [options] {
            if (!raw_cupti::start(options)) std::exit(1);
          },
          [] { return raw_cupti::stop(); }};
}

Variant probe(const char* name, std::string config) {
  auto session = std::make_shared<std::unique_ptr<gpuprobe::Session>>();
  auto counter = std::make_shared<std::shared_ptr<KernelCounter>>();
  return {name,
          [=] {
            *counter = std::make_shared<KernelCounter>();
            *session = std::make_unique<gpuprobe::Session>(
                config, std::vector<std::shared_ptr<gpuprobe::Sink>>{*counter});
            if (!(*session)->ok()) {
              std::printf("session failed: %s\n", (*session)->error().c_str());
              std::exit(1);
            }
          },
          [=] {
            (*session)->stop();
            session->reset();
            return (*counter)->kernels;
          }};
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  check(cudaFree(nullptr));
  // Variants run interleaved, repeat by repeat, so that drift of the machine spreads evenly.
  std::vector<Variant> variants;
  variants.push_back(bare("bare"));
  variants.push_back(raw("raw CUPTI kernel", {false, false, 0}));
  variants.push_back(raw("raw CUPTI kernel+runtime", {true, false, 0}));
  variants.push_back(probe("gpuprobe kernel", "cupti=kernel"));
  variants.push_back(probe("gpuprobe kernel+runtime", "cupti=kernel+runtime"));
  variants.push_back(bare("bare after gpuprobe stop"));
  // Where a difference would come from: the floor with gpuprobe's clock, or its periodic flush.
  variants.push_back(raw("raw kernel + tsc clock", {false, true, 0}));
  variants.push_back(raw("raw kernel + 20 ms flush", {false, false, 20}));
  for (int r = 0; r < kRepeats; ++r) {
    for (Variant& v : variants) {
      v.start();
      v.us.push_back(time_launches(kLaunches));
      v.kernels = v.stop();
    }
  }
  const auto added = [&](std::size_t i) { return median(variants[i].us) - median(variants[0].us); };

  // 1 M launches at full rate with default buffers: every kernel must arrive.
  constexpr int kMillion = 1000000;
  auto counter = std::make_shared<KernelCounter>();
  gpuprobe::Session session("cupti=kernel+runtime", {counter});
  time_launches(kMillion);
  session.stop();
  const gpuprobe::Stats stats = session.stats();
  const std::uint64_t expected_million = kMillion + kWarmup;  // the warm-up launches too

  const double base = median(variants[0].us);
  std::printf("\n%-28s %10s %12s %12s\n", "case", "us/launch", "added us", "kernels");
  for (std::size_t i = 0; i < variants.size(); ++i) {
    std::printf("%-28s %10.3f %12.3f %12llu\n", variants[i].name.c_str(), median(variants[i].us),
                added(i), static_cast<unsigned long long>(variants[i].kernels));
  }
  const double kernel_ratio = added(3) / added(1);
  const double runtime_ratio = added(4) / added(2);
  const double after = median(variants[5].us) / base;
  std::printf(
      "\ngpuprobe added / raw CUPTI added: kernel %.2fx, kernel+runtime %.2fx (target <= 1.15)\n",
      kernel_ratio, runtime_ratio);
  std::printf("after gpuprobe stop / bare: %.3f (target <= 1.02); bare spread %.3f..%.3f us\n",
              after, *std::min_element(variants[0].us.begin(), variants[0].us.end()),
              *std::max_element(variants[0].us.begin(), variants[0].us.end()));
  std::printf(
      "1M launches: %llu of %llu kernels recorded, CUPTI dropped %llu, buffers exhausted %llu\n",
      static_cast<unsigned long long>(counter->kernels),
      static_cast<unsigned long long>(expected_million),
      static_cast<unsigned long long>(stats.gpu.dropped),
      static_cast<unsigned long long>(stats.gpu.buffers_exhausted));
  const bool all_recorded = counter->kernels == expected_million;
  return kernel_ratio <= 1.15 && runtime_ratio <= 1.15 && after <= 1.02 && all_recorded ? 0 : 3;
}
