// A minimal check harness for the GPU tests, which run outside Catch2: each CHECK counts, a
// failure prints its expression and location, and the program ends with the plain
// "N passed, M failed" line. Without a device the program says "skipped: no CUDA device" and
// exits with 77, which CTest shows as a skip.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace gpuprobe::gpu_test {

inline int g_passed = 0;
inline int g_failed = 0;

inline void check(bool ok, const char* expr, const char* file, int line) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::printf("FAILED %s:%d: %s\n", file, line, expr);
  }
}

inline void cuda_ok(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) {
    std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(err), file, line, expr);
    std::exit(1);
  }
}

// Exits with the skip code when there is no usable device.
inline void require_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("skipped: no CUDA device\n");
    std::exit(77);
  }
}

inline int finish() {
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

}  // namespace gpuprobe::gpu_test

#define CHECK(expr) ::gpuprobe::gpu_test::check(static_cast<bool>(expr), #expr, __FILE__, __LINE__)
#define CUDA_OK(expr) ::gpuprobe::gpu_test::cuda_ok((expr), #expr, __FILE__, __LINE__)
