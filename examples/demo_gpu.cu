// The demo's GPU stage (see demo_gpu.h).
#include <cuda_runtime.h>

#include "demo_gpu.h"

namespace {

constexpr int kElements = 1 << 18;

}  // namespace

__global__ void layer_kernel(float* data, int n, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * scale + 1.0f;
}

struct GpuStage {
  cudaStream_t stream = nullptr;
  float* device = nullptr;
  float* host = nullptr;
};

GpuStage* gpu_stage_open() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return nullptr;
  auto* stage = new GpuStage;
  if (cudaStreamCreateWithFlags(&stage->stream, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc(&stage->device, kElements * sizeof(float)) != cudaSuccess ||
      cudaMallocHost(&stage->host, kElements * sizeof(float)) != cudaSuccess) {
    gpu_stage_close(stage);
    return nullptr;
  }
  for (int i = 0; i < kElements; ++i) stage->host[i] = static_cast<float>(i % 97);
  return stage;
}

void gpu_stage_upload(GpuStage* s) {
  cudaMemcpyAsync(s->device, s->host, kElements * sizeof(float), cudaMemcpyHostToDevice, s->stream);
}

void gpu_stage_layer(GpuStage* s, int layer) {
  layer_kernel<<<(kElements + 255) / 256, 256, 0, s->stream>>>(s->device, kElements,
                                                               0.5f + 0.1f * layer);
}

void gpu_stage_download(GpuStage* s) {
  cudaMemcpyAsync(s->host, s->device, kElements * sizeof(float), cudaMemcpyDeviceToHost, s->stream);
  cudaStreamSynchronize(s->stream);
}

void gpu_stage_close(GpuStage* s) {
  if (s == nullptr) return;
  if (s->host != nullptr) cudaFreeHost(s->host);
  if (s->device != nullptr) cudaFree(s->device);
  if (s->stream != nullptr) cudaStreamDestroy(s->stream);
  delete s;
}
