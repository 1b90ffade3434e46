// A CUDA program built without gpuprobe, annotated with plain NVTX3 calls: under `gpuprobe run`
// (CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH naming libgpuprobe_nvtx.so) its kernels,
// copies and NVTX ranges are recorded, each kernel attributed to the NVTX range that launched
// it (test/python/test_run_native.py checks the trace). Exits 77 without a CUDA device.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <vector>

__global__ void scale(float* data, int n, float by) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= by;
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  const int n = 1 << 20;
  std::vector<float> host(n, 1.0f);
  float* device = nullptr;
  if (cudaMalloc(&device, n * sizeof(float)) != cudaSuccess) return 1;
  nvtxRangePushA("upload");
  cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  nvtxRangePop();
  for (int step = 0; step < 5; ++step) {
    nvtxRangePushA("plain step");
    for (int k = 0; k < 4; ++k) scale<<<(n + 255) / 256, 256>>>(device, n, 1.5f);
    cudaDeviceSynchronize();
    nvtxRangePop();
  }
  cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  // 1.5^20 = 3325.26: the program computed what it computes without gpuprobe.
  std::printf("value %.2f\n", host[0]);
  return host[0] > 3325.0f && host[0] < 3326.0f ? 0 : 1;
}
