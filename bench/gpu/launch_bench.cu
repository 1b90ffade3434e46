// The cost CUPTI tracing adds to a kernel launch, in one run, for an empty kernel launched back
// to back (the CPU-bound case where tracing costs most). Each traced measurement is paired with
// a bare one taken just before it, and the added cost is the median of those paired
// differences: the machine's drift between repeats (seen: +-12 % within one run) cancels out.
// The cases run interleaved, in the opposite order every other repeat, so that no case always
// follows the same one.
//   raw CUPTI kernel[+rt]    the floor: raw_cupti_floor.cc with the same activity kinds, with
//                            a preallocated pool or a malloc per buffer; the floor is the
//                            cheaper of the two, the least a CUPTI consumer can do
//   gpuprobe kernel[+rt]     Session("cupti=kernel[+runtime]")
//   between bursts           Session("cupti=kernel+runtime,gpu_burst=10ms/1h") after its first
//                            burst: CUPTI's kinds and callbacks off, CUPTI still attached
//   after stop               bare, right after a gpuprobe session stopped (CUPTI finalized),
//                            against the bare run just before that session
// plus 1 M launches at full rate with default buffers, counting kernel records.
// Prints each case's median added cost with quartiles; exits non-zero if a target is missed
// (added cost > 1.15x the floor's, lost kernels, after-stop > 2% slower).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "raw_cupti_floor.h"

__global__ void empty_kernel() {}

namespace {

constexpr int kLaunches = 100000;
constexpr int kWarmup = 20000;
constexpr int kRepeats = 12;  // even: each order runs as often

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

// The q-quantile (0..1) of `v`, by nearest rank.
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

double median(const std::vector<double>& v) { return quantile(v, 0.5); }

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
  std::vector<double> added;  // us per launch over the bare run just before, per repeat
  std::uint64_t kernels = 0;
};

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
            if (!(*session)->stop().ok()) std::exit(1);
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
  // Variants run interleaved, repeat by repeat, each right after a bare run it is compared with.
  std::vector<Variant> variants;
  enum {
    kRawKernel,
    kRawKernelMalloc,
    kRawRuntime,
    kRawRuntimeMalloc,
    kProbeKernel,
    kProbeRuntime
  };
  variants.push_back(raw("raw CUPTI kernel (pool)", {false, false, 0, false}));
  variants.push_back(raw("raw CUPTI kernel (malloc)", {false, false, 0, true}));
  variants.push_back(raw("raw CUPTI kernel+rt (pool)", {true, false, 0, false}));
  variants.push_back(raw("raw CUPTI kernel+rt (malloc)", {true, false, 0, true}));
  variants.push_back(probe("gpuprobe kernel", "cupti=kernel"));
  variants.push_back(probe("gpuprobe kernel+runtime", "cupti=kernel+runtime"));
  // Between two bursts (gpu_burst=): the first burst is over before the warm-up is.
  if (std::getenv("GPUPROBE_LAUNCH_BENCH_NO_BURST") == nullptr) {
    variants.push_back(
        probe("gpuprobe k+rt between bursts", "cupti=kernel+runtime,gpu_burst=10ms/1h"));
  }
  // Where a difference would come from: the floor with gpuprobe's clock, or its periodic flush.
  variants.push_back(raw("raw kernel + tsc clock", {false, true, 0, false}));
  variants.push_back(raw("raw kernel + 20 ms flush", {false, false, 20, false}));
  std::vector<double> bare_us;
  std::vector<double> after_stop;  // bare after a gpuprobe session / bare before it
  for (int r = 0; r < kRepeats; ++r) {
    for (std::size_t k = 0; k < variants.size(); ++k) {
      const std::size_t i = r % 2 == 0 ? k : variants.size() - 1 - k;
      Variant& v = variants[i];
      const double before = time_launches(kLaunches);
      bare_us.push_back(before);
      v.start();
      v.added.push_back(time_launches(kLaunches) - before);
      v.kernels = v.stop();
      if (i == kProbeRuntime) after_stop.push_back(time_launches(kLaunches) / before);
    }
  }

  // 1 M launches at full rate with default buffers: every kernel must arrive.
  constexpr int kMillion = 1000000;
  auto counter = std::make_shared<KernelCounter>();
  gpuprobe::Session session("cupti=kernel+runtime", {counter});
  time_launches(kMillion);
  if (!session.stop().ok()) return 1;
  const gpuprobe::Stats stats = session.stats();
  const std::uint64_t expected_million = kMillion + kWarmup;  // the warm-up launches too

  std::printf("\nbare: median %.3f us/launch, %.3f..%.3f (quartiles) over %zu runs\n",
              median(bare_us), quantile(bare_us, 0.25), quantile(bare_us, 0.75), bare_us.size());
  std::printf("%-28s %12s %22s %12s\n", "case", "added us", "quartiles", "kernels");
  for (const Variant& v : variants) {
    std::printf("%-28s %12.3f %10.3f..%-10.3f %12llu\n", v.name.c_str(), median(v.added),
                quantile(v.added, 0.25), quantile(v.added, 0.75),
                static_cast<unsigned long long>(v.kernels));
  }
  const auto floor = [&](int a, int b) {
    return std::min(median(variants[a].added), median(variants[b].added));
  };
  const double kernel_ratio =
      median(variants[kProbeKernel].added) / floor(kRawKernel, kRawKernelMalloc);
  const double runtime_ratio =
      median(variants[kProbeRuntime].added) / floor(kRawRuntime, kRawRuntimeMalloc);
  const double after = median(after_stop);
  std::printf(
      "\ngpuprobe added / raw CUPTI added (the cheaper floor): kernel %.2fx, kernel+runtime %.2fx "
      "(target <= 1.15)\n",
      kernel_ratio, runtime_ratio);
  std::printf(
      "after gpuprobe stop / bare just before it: %.3f (quartiles %.3f..%.3f; target <= 1.02)\n",
      after, quantile(after_stop, 0.25), quantile(after_stop, 0.75));
  std::printf(
      "1M launches: %llu of %llu kernels recorded, CUPTI dropped %llu, buffers exhausted %llu\n",
      static_cast<unsigned long long>(counter->kernels),
      static_cast<unsigned long long>(expected_million),
      static_cast<unsigned long long>(stats.gpu.dropped),
      static_cast<unsigned long long>(stats.gpu.buffers_exhausted));
  const bool all_recorded = counter->kernels == expected_million;
  return kernel_ratio <= 1.15 && runtime_ratio <= 1.15 && after <= 1.02 && all_recorded ? 0 : 3;
}
