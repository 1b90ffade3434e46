// Many host threads, each with several streams, launching, copying (pinned and pageable, both
// ways), setting and freeing, then exiting — recorded with the default CUPTI buffers. CUPTI keeps
// a buffer per thread that calls CUDA, so a fixed pool sized for one thread loses records here
// (the last cudaFree, cudaFreeHost and cudaStreamDestroy of exiting threads among them). With
// defaults nothing may be lost: every kernel, copy, set and API call arrives, each once.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_check.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"

__global__ void worker_kernel(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = out[i] * 0.5f + 1.0f;
}

namespace {

constexpr int kHostThreads = 16;
constexpr int kStreamsPerThread = 3;
constexpr int kLaunchesPerStream = 200;
constexpr int kCopiesPerStream = 4;  // each: pinned HtoD, pinned DtoH, pageable HtoD, pageable DtoH
constexpr int kN = 1 << 14;

}  // namespace

int main() {
  using gpuprobe::GpuActivity;
  using gpuprobe::GpuActivityKind;
  gpuprobe::gpu_test::require_device();
  CUDA_OK(cudaFree(nullptr));

  auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
  // Default buffers, default flush; GPUPROBE_GPU_TEST_CONFIG adds keys (",cupti_api=activity").
  const char* more = std::getenv("GPUPROBE_GPU_TEST_CONFIG");
  gpuprobe::Session session(std::string("cupti=all") + (more != nullptr ? more : ""), {sink});
  CHECK(session.ok());

  std::vector<std::int64_t> tids(kHostThreads);
  {
    std::vector<std::thread> workers;
    for (int t = 0; t < kHostThreads; ++t) {
      workers.emplace_back([&, t] {
        tids[t] = static_cast<std::int64_t>(gettid());
        GPUPROBE_RANGE("worker");
        float* dev = nullptr;
        float* pinned = nullptr;
        std::vector<float> pageable(kN, 1.0f);
        CUDA_OK(cudaMalloc(&dev, kN * sizeof(float)));
        CUDA_OK(cudaMallocHost(&pinned, kN * sizeof(float)));
        cudaStream_t streams[kStreamsPerThread];
        for (cudaStream_t& s : streams)
          CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        for (cudaStream_t s : streams) {
          CUDA_OK(cudaMemsetAsync(dev, 0, kN * sizeof(float), s));
          for (int i = 0; i < kLaunchesPerStream; ++i)
            worker_kernel<<<kN / 256, 256, 0, s>>>(dev, kN);
          for (int i = 0; i < kCopiesPerStream; ++i) {
            CUDA_OK(cudaMemcpyAsync(dev, pinned, kN * sizeof(float), cudaMemcpyHostToDevice, s));
            CUDA_OK(cudaMemcpyAsync(pinned, dev, kN * sizeof(float), cudaMemcpyDeviceToHost, s));
            CUDA_OK(cudaMemcpyAsync(dev, pageable.data(), kN * sizeof(float),
                                    cudaMemcpyHostToDevice, s));
            CUDA_OK(cudaMemcpyAsync(pageable.data(), dev, kN * sizeof(float),
                                    cudaMemcpyDeviceToHost, s));
          }
        }
        for (cudaStream_t s : streams) CUDA_OK(cudaStreamSynchronize(s));
        for (cudaStream_t s : streams) CUDA_OK(cudaStreamDestroy(s));
        CUDA_OK(cudaFreeHost(pinned));
        CUDA_OK(cudaFree(dev));  // the thread's last CUDA call, just before it exits
      });
    }
    for (std::thread& w : workers) w.join();
  }
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(session.stop().ok());

  const gpuprobe::Stats stats = session.stats();
  std::printf(
      "threads test: records %llu, dropped %llu, buffers exhausted %llu, attributed %llu, "
      "unattributed %llu\n",
      static_cast<unsigned long long>(stats.gpu.records),
      static_cast<unsigned long long>(stats.gpu.dropped),
      static_cast<unsigned long long>(stats.gpu.buffers_exhausted),
      static_cast<unsigned long long>(stats.gpu.attributed),
      static_cast<unsigned long long>(stats.gpu.unattributed));
  CHECK(stats.gpu.status == "cupti");
  CHECK(stats.gpu.dropped == 0);
  CHECK(stats.gpu.buffers_exhausted == 0);

  const std::set<std::int64_t> workers(tids.begin(), tids.end());
  std::uint64_t kernels = 0, kernels_in_worker = 0, copies = 0, sets = 0;
  std::map<std::string, std::map<std::int64_t, int>> api;  // name -> worker tid -> calls
  for (const GpuActivity& a : sink->gpu()) {
    if (a.kind == GpuActivityKind::kKernel) {
      ++kernels;
      kernels_in_worker += a.range != nullptr && std::string(a.range->name) == "worker";
    } else if (a.kind == GpuActivityKind::kMemcpy) {
      ++copies;
    } else if (a.kind == GpuActivityKind::kMemset) {
      ++sets;
    } else if (a.kind == GpuActivityKind::kRuntimeApi && workers.count(a.os_tid)) {
      api[a.name][a.os_tid]++;
    }
  }
  const std::uint64_t per_thread_streams = kHostThreads * kStreamsPerThread;
  std::printf("kernels %llu, copies %llu, sets %llu\n", static_cast<unsigned long long>(kernels),
              static_cast<unsigned long long>(copies), static_cast<unsigned long long>(sets));
  CHECK(kernels == per_thread_streams * kLaunchesPerStream);
  CHECK(kernels_in_worker == kernels);
  CHECK(copies == per_thread_streams * kCopiesPerStream * 4);
  CHECK(sets == per_thread_streams);
  // Every worker's calls, its last ones included, each recorded exactly as often as made.
  for (const auto& [name, by_thread] : api) {
    int calls = 0;
    for (const auto& [tid, n] : by_thread) calls += n;
    std::printf("  %-32s %2zu threads, %5d calls\n", name.c_str(), by_thread.size(), calls);
  }
  const auto expect_calls = [&](const char* name, int per_thread) {
    const auto& by_thread = api[name];
    if (by_thread.size() != workers.size())
      std::printf("%s: made on %zu threads, recorded on %zu\n", name, workers.size(),
                  by_thread.size());
    CHECK(by_thread.size() == workers.size());
    for (const auto& [tid, n] : by_thread) CHECK(n == per_thread);
  };
  // The runtime implements cudaMallocHost as cudaHostAlloc, and CUPTI names it so.
  for (const char* name : {"cudaMalloc", "cudaHostAlloc", "cudaFreeHost", "cudaFree"})
    expect_calls(name, 1);
  for (const char* name :
       {"cudaStreamCreateWithFlags", "cudaStreamDestroy", "cudaStreamSynchronize"})
    expect_calls(name, kStreamsPerThread);
  expect_calls("cudaLaunchKernel", kStreamsPerThread * kLaunchesPerStream);
  return gpuprobe::gpu_test::finish();
}
