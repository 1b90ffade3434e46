// Another profiler holding CUPTI (here a raw subscriber, as torch.profiler, Nsight Systems or
// compute-sanitizer would) makes gpuprobe say "CUPTI unavailable" once and record CPU events
// only, without disturbing that profiler; once it lets go, gpuprobe records GPU work, and after
// gpuprobe stops, CUPTI is free for others again.
#include <cuda_runtime.h>
#include <cupti.h>

#include <memory>
#include <string>

#include "gpu/gpu_check.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"

__global__ void coexistence_kernel() {}

namespace {

void CUPTIAPI other_profiler_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

}  // namespace

int main() {
  gpuprobe::gpu_test::require_device();
  CUDA_OK(cudaFree(nullptr));

  CUpti_SubscriberHandle other = nullptr;
  CHECK(cuptiSubscribe(&other, &other_profiler_callback, nullptr) == CUPTI_SUCCESS);
  {
    auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
    gpuprobe::Session session("cupti=kernel+runtime", {sink});
    CHECK(session.ok());
    { GPUPROBE_RANGE("cpu_while_cupti_taken"); }
    coexistence_kernel<<<1, 1>>>();
    CUDA_OK(cudaDeviceSynchronize());
    CHECK(session.stop().ok());
    const gpuprobe::Stats stats = session.stats();
    std::printf("with another subscriber: %s\n", stats.gpu.status.c_str());
    CHECK(stats.gpu.status.find(
              "CUPTI unavailable: cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS") == 0);
    CHECK(stats.gpu.status.find("another profiler") != std::string::npos);
    CHECK(sink->named("cpu_while_cupti_taken").size() == 1);
    CHECK(sink->gpu().empty());
  }
  // The other profiler was left alone: it still holds CUPTI and can let go normally.
  CHECK(cuptiUnsubscribe(other) == CUPTI_SUCCESS);

  {
    auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
    gpuprobe::Session session("cupti=kernel+runtime", {sink});
    coexistence_kernel<<<1, 1>>>();
    CUDA_OK(cudaDeviceSynchronize());
    CHECK(session.stop().ok());
    CHECK(session.stats().gpu.status == "cupti");
    int kernels = 0;
    for (const gpuprobe::GpuActivity& a : sink->gpu())
      kernels += a.kind == gpuprobe::GpuActivityKind::kKernel;
    CHECK(kernels == 1);
  }
  // After gpuprobe stopped, CUPTI is free for the next tool.
  CUpti_SubscriberHandle next = nullptr;
  CHECK(cuptiSubscribe(&next, &other_profiler_callback, nullptr) == CUPTI_SUCCESS);
  if (next != nullptr) CHECK(cuptiUnsubscribe(next) == CUPTI_SUCCESS);
  return gpuprobe::gpu_test::finish();
}
