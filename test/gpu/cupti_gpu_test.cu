// Known GPU work — direct launches, a CUDA graph, copies both ways, memsets, several streams,
// several host threads — recorded through CUPTI: every piece appears exactly once, starts after
// its launch call started, lasts longer than zero, and has the right name.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_check.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"

// Kernels at namespace scope, so their demangled names are exactly these.
__global__ void direct_kernel(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += 1;
}
__global__ void graph_kernel(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] *= 2;
}
__global__ void stream_kernel(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] -= 1;
}
__global__ void thread_kernel(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] ^= 1;
}

namespace {

constexpr int kN = 1 << 16;
constexpr int kThreads = 256;
constexpr int kBlocks = kN / kThreads;

}  // namespace

int main() {
  using gpuprobe::GpuActivity;
  using gpuprobe::GpuActivityKind;
  gpuprobe::gpu_test::require_device();
  int* dev = nullptr;
  int* host = nullptr;
  CUDA_OK(cudaMalloc(&dev, kN * sizeof(int)));
  CUDA_OK(cudaMallocHost(&host, kN * sizeof(int)));
  cudaStream_t streams[3];
  for (cudaStream_t& s : streams) CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
  // GPUPROBE_GPU_TEST_TRACE=path also writes the Chrome trace, for a look at the real thing;
  // GPUPROBE_GPU_TEST_CONFIG adds keys (",cupti_api=activity": the other way to record calls).
  std::string config = "cupti=all,flush_ms=5";
  if (const char* trace = std::getenv("GPUPROBE_GPU_TEST_TRACE"))
    config += std::string(",chrome=") + trace;
  if (const char* more = std::getenv("GPUPROBE_GPU_TEST_CONFIG")) config += more;
  gpuprobe::Session session(config, {sink});
  CHECK(session.ok());

  {
    GPUPROBE_RANGE("direct_launches");
    for (int i = 0; i < 10; ++i) direct_kernel<<<kBlocks, kThreads, 0, streams[0]>>>(dev, kN);
    CUDA_OK(cudaGetLastError());
  }
  {
    GPUPROBE_RANGE("graph_launches");
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(streams[1], cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 3; ++i) graph_kernel<<<kBlocks, kThreads, 0, streams[1]>>>(dev, kN);
    CUDA_OK(cudaStreamEndCapture(streams[1], &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_OK(cudaGraphLaunch(exec, streams[1]));
    CUDA_OK(cudaGraphLaunch(exec, streams[1]));
    CUDA_OK(cudaStreamSynchronize(streams[1]));
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
  }
  {
    GPUPROBE_RANGE("copies");
    for (int i = 0; i < 5; ++i) {
      CUDA_OK(cudaMemcpyAsync(dev, host, kN * sizeof(int), cudaMemcpyHostToDevice, streams[0]));
      CUDA_OK(cudaMemcpyAsync(host, dev, kN * sizeof(int), cudaMemcpyDeviceToHost, streams[0]));
    }
    for (int i = 0; i < 3; ++i) CUDA_OK(cudaMemsetAsync(dev, 0, kN * sizeof(int), streams[0]));
    CUDA_OK(cudaStreamSynchronize(streams[0]));
  }
  {
    GPUPROBE_RANGE("streams");
    for (cudaStream_t s : streams) {
      for (int i = 0; i < 2; ++i) stream_kernel<<<kBlocks, kThreads, 0, s>>>(dev, kN);
    }
    CUDA_OK(cudaDeviceSynchronize());
  }
  std::vector<std::int64_t> worker_tids(4);
  {
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
      workers.emplace_back([&, t] {
        worker_tids[t] = static_cast<std::int64_t>(gettid());
        GPUPROBE_RANGE("thread_work");
        cudaStream_t s;
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        for (int i = 0; i < 5; ++i) thread_kernel<<<kBlocks, kThreads, 0, s>>>(dev, kN);
        CUDA_OK(cudaStreamSynchronize(s));
        CUDA_OK(cudaStreamDestroy(s));
      });
    }
    for (std::thread& w : workers) w.join();
  }
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(session.stop().ok());

  const gpuprobe::Stats stats = session.stats();
  std::printf(
      "gpu status: %s, records %llu, dropped %llu, filtered %llu, starts before launch %llu, "
      "attributed %llu, unattributed %llu\n",
      stats.gpu.status.c_str(), static_cast<unsigned long long>(stats.gpu.records),
      static_cast<unsigned long long>(stats.gpu.dropped),
      static_cast<unsigned long long>(stats.gpu.filtered),
      static_cast<unsigned long long>(stats.gpu.starts_before_launch),
      static_cast<unsigned long long>(stats.gpu.attributed),
      static_cast<unsigned long long>(stats.gpu.unattributed));
  CHECK(stats.gpu.status == "cupti");
  CHECK(stats.gpu.dropped == 0);
  CHECK(stats.gpu.buffers_exhausted == 0);
  CHECK(stats.gpu.starts_before_launch == 0);

  const std::vector<GpuActivity> gpu = sink->gpu();
  std::map<std::uint32_t, const GpuActivity*> launch_by_correlation;
  for (const GpuActivity& a : gpu) {
    if (a.kind == GpuActivityKind::kRuntimeApi) launch_by_correlation[a.correlation] = &a;
  }
  std::map<std::string, int> kernels;
  std::map<std::string, std::set<std::uint32_t>> kernel_streams;
  std::map<std::string, std::set<std::int64_t>> launch_threads;
  std::map<std::string, std::set<std::string>> ranges;  // work name -> ranges it was attributed to
  int graph_kernels_with_graph_id = 0, htod = 0, dtoh = 0, memsets = 0, unmatched = 0, early = 0,
      empty = 0;
  for (const GpuActivity& a : gpu) {
    if (a.kind != GpuActivityKind::kKernel && a.kind != GpuActivityKind::kMemcpy &&
        a.kind != GpuActivityKind::kMemset) {
      continue;
    }
    if (a.end <= a.start) ++empty;
    const auto launch = launch_by_correlation.find(a.correlation);
    if (launch == launch_by_correlation.end()) {
      ++unmatched;
    } else if (a.start < launch->second->start) {
      ++early;
    }
    ranges[a.name].insert(a.range != nullptr ? a.range->name : "(none)");
    if (a.kind == GpuActivityKind::kKernel) {
      const std::string name = a.name;
      ++kernels[name];
      kernel_streams[name].insert(a.stream);
      if (launch != launch_by_correlation.end())
        launch_threads[name].insert(launch->second->os_tid);
      if (name.rfind("graph_kernel", 0) == 0 && a.graph_id != 0) ++graph_kernels_with_graph_id;
      CHECK(a.grid[0] == kBlocks);
      CHECK(a.block[0] == kThreads);
    } else if (a.kind == GpuActivityKind::kMemcpy) {
      CHECK(a.bytes == kN * sizeof(int));
      htod += a.copy_kind == gpuprobe::MemcpyKind::kHtoD;
      dtoh += a.copy_kind == gpuprobe::MemcpyKind::kDtoH;
    } else {
      ++memsets;
    }
  }
  for (const auto& [name, n] : kernels) std::printf("kernel %-40s x%d\n", name.c_str(), n);
  CHECK(kernels["direct_kernel(int*, int)"] == 10);
  CHECK(kernels["graph_kernel(int*, int)"] == 6);
  CHECK(graph_kernels_with_graph_id == 6);
  CHECK(kernels["stream_kernel(int*, int)"] == 6);
  CHECK(kernel_streams["stream_kernel(int*, int)"].size() == 3);
  CHECK(kernels["thread_kernel(int*, int)"] == 20);
  CHECK(htod == 5);
  CHECK(dtoh == 5);
  CHECK(memsets == 3);
  CHECK(empty == 0);
  CHECK(early == 0);
  CHECK(unmatched == 0);  // graph kernels carry the correlation of their cudaGraphLaunch
  // Each piece of work is attributed to the range around its launch.
  for (const auto& [name, in] : ranges) {
    for (const std::string& r : in) std::printf("%-40s in range %s\n", name.c_str(), r.c_str());
  }
  using Names = std::set<std::string>;
  CHECK(ranges["direct_kernel(int*, int)"] == Names{"direct_launches"});
  CHECK(ranges["graph_kernel(int*, int)"] == Names{"graph_launches"});
  CHECK(ranges["stream_kernel(int*, int)"] == Names{"streams"});
  CHECK(ranges["thread_kernel(int*, int)"] == Names{"thread_work"});
  CHECK(ranges["Memcpy HtoD (Pinned -> Device)"] == Names{"copies"});
  CHECK(ranges["Memcpy DtoH (Device -> Pinned)"] == Names{"copies"});
  CHECK(ranges["Memset (Device)"] == Names{"copies"});
  CHECK(stats.gpu.attributed >= 42 + 10 + 3);  // every kernel, copy and set, and their launches

  // Launch calls are placed on the thread that made them, by the same id as its CPU events.
  const std::set<std::int64_t> expected_threads(worker_tids.begin(), worker_tids.end());
  CHECK(launch_threads["thread_kernel(int*, int)"] == expected_threads);
  CHECK(launch_threads["direct_kernel(int*, int)"] == std::set<std::int64_t>{gettid()});

  // The calls nobody reads are never recorded, not recorded and dropped: they were switched off
  // in CUPTI one by one (lib/gpu/cupti/api_selection.cc), so nothing reached the filter.
  std::set<std::string> api_names;
  for (const GpuActivity& a : gpu) {
    if (a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi)
      api_names.insert(a.name);
  }
  for (const std::string& name : api_names) std::printf("API call recorded: %s\n", name.c_str());
  CHECK(stats.gpu.filtered == 0);
  CHECK(api_names.count("cudaGetLastError") == 0);
  CHECK(api_names.count("cudaStreamCreateWithFlags") == 1);  // kept: rare, and a cost when not
  CHECK(api_names.count("cudaLaunchKernel") == 1);
  CHECK(api_names.count("cudaGraphLaunch") == 1);
  CHECK(api_names.count("cudaMemcpyAsync") == 1);
  CHECK(api_names.count("cudaStreamSynchronize") == 1);

  // all_api: every call, the queries included.
  {
    auto everything = std::make_shared<gpuprobe::testing::CaptureSink>();
    gpuprobe::Session all_api("cupti=kernel+runtime+all_api,flush_ms=5", {everything});
    CHECK(all_api.ok());
    direct_kernel<<<kBlocks, kThreads, 0, streams[0]>>>(dev, kN);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaStreamSynchronize(streams[0]));
    CHECK(all_api.stop().ok());
    std::set<std::string> names;
    for (const GpuActivity& a : everything->gpu()) names.insert(a.name);
    CHECK(names.count("cudaGetLastError") == 1);
    CHECK(names.count("cudaLaunchKernel") == 1);
    CHECK(all_api.stats().gpu.filtered == 0);
  }

  CUDA_OK(cudaFree(dev));
  CUDA_OK(cudaFreeHost(host));
  return gpuprobe::gpu_test::finish();
}
