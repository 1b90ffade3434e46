// gpuprobe::launch(): the kernel runs with its arguments; the launch is recorded with its
// configuration and declared cost, timed by CUDA events without CUPTI and by CUPTI with it,
// inside the range named after it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_check.h"
#include "gpuprobe/cuda.hpp"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

namespace {

constexpr int kN = 1 << 20;
constexpr int kLaunches = 5;

struct Buffers {
  float* x = nullptr;
  float* y = nullptr;
};

// Launches saxpy kLaunches times through gpuprobe::launch() and checks the arithmetic.
void run_saxpy(const Buffers& b, cudaStream_t stream) {
  std::vector<float> ones(kN, 1.0f);
  // On the kernels' stream: cudaMemset and cudaMemcpy run on the legacy default stream, which a
  // non-blocking stream does not wait for (the arithmetic check failed once on the H200 and once
  // on an H100 with the kernels racing the memset: issue 40 item 8).
  CUDA_OK(cudaMemcpyAsync(b.x, ones.data(), kN * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_OK(cudaMemsetAsync(b.y, 0, kN * sizeof(float), stream));
  const gpuprobe::KernelCost cost{3.0 * kN * sizeof(float), 2.0 * kN};
  for (int i = 0; i < kLaunches; ++i) {
    CHECK(gpuprobe::launch("saxpy", cost, saxpy_kernel, dim3((kN + 255) / 256), dim3(256), 0,
                           stream, kN, 2.0f, b.x, b.y) == cudaSuccess);
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<float> y(kN);
  CUDA_OK(cudaMemcpy(y.data(), b.y, kN * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(y[0] == 2.0f * kLaunches);
  CHECK(y[kN - 1] == 2.0f * kLaunches);
}

int count_saxpy(const std::vector<gpuprobe::GpuActivity>& gpu, const std::string& name) {
  int n = 0;
  for (const gpuprobe::GpuActivity& a : gpu) {
    if (a.kind != gpuprobe::GpuActivityKind::kKernel || a.name != name) continue;
    ++n;
    CHECK(a.end > a.start);
    CHECK(a.grid[0] == (kN + 255) / 256);
    CHECK(a.block[0] == 256);
    CHECK(a.declared_bytes == 3.0 * kN * sizeof(float));
    CHECK(a.declared_flops == 2.0 * kN);
    CHECK(a.range != nullptr && std::string(a.range->name) == "saxpy");
  }
  return n;
}

}  // namespace

int main() {
  gpuprobe::gpu_test::require_device();
  Buffers b;
  CUDA_OK(cudaMalloc(&b.x, kN * sizeof(float)));
  CUDA_OK(cudaMalloc(&b.y, kN * sizeof(float)));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  run_saxpy(b, stream);  // no session: a plain launch

  {  // No CUPTI: gpuprobe times the kernels with CUDA events.
    auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
    gpuprobe::Session session("", {sink});
    run_saxpy(b, stream);
    CHECK(session.stop().ok());
    const auto gpu = sink->gpu();
    CHECK(count_saxpy(gpu, "saxpy") == kLaunches);
    CHECK(session.stats().gpu.untimed == 0);
    const auto ranges = sink->named("saxpy");
    CHECK(ranges.size() == static_cast<std::size_t>(kLaunches));
    // Placed on gpuprobe's clock: each kernel starts after the launch range that issued it
    // began (give or take the anchor's wake-up latency), and the kernels of the one stream run
    // one after another.
    const gpuprobe::TimeBase time = sink->time_base();
    std::vector<std::pair<std::int64_t, std::int64_t>> kernels;
    for (const gpuprobe::GpuActivity& a : gpu) {
      if (a.kind == gpuprobe::GpuActivityKind::kKernel)
        kernels.emplace_back(time.wall_ns(a.start), time.wall_ns(a.end));
    }
    std::sort(kernels.begin(), kernels.end());
    std::vector<std::int64_t> launch_begins;
    for (const auto& r : ranges) launch_begins.push_back(r.begin_ns);
    std::sort(launch_begins.begin(), launch_begins.end());
    constexpr std::int64_t kSlackNs = 50'000;
    for (std::size_t i = 0; i < kernels.size() && i < launch_begins.size(); ++i) {
      CHECK(kernels[i].first >= launch_begins[i] - kSlackNs);
      if (i > 0) CHECK(kernels[i].first >= kernels[i - 1].second - kSlackNs);
    }
    std::printf("CUDA events: %zu kernels, %zu launch ranges\n", gpu.size(), ranges.size());
  }
  {  // With CUPTI: CUPTI's kernel records carry the declared cost.
    auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
    gpuprobe::Session session("cupti=kernel+runtime", {sink});
    run_saxpy(b, stream);
    CHECK(session.stop().ok());
    CHECK(session.stats().gpu.status == "cupti");
    CHECK(count_saxpy(sink->gpu(), "saxpy_kernel(int, float, float const*, float*)") == kLaunches);
  }
  CUDA_OK(cudaStreamDestroy(stream));
  CUDA_OK(cudaFree(b.x));
  CUDA_OK(cudaFree(b.y));
  return gpuprobe::gpu_test::finish();
}
