// GPUPROBE=...,cupti=all traces a CUDA program that never creates a Session: the session starts
// before main and stops at exit, after the CUDA runtime's own exit handlers may have run. The
// program must exit normally and the trace must hold its kernels.
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpu/gpu_check.h"
#include "gpuprobe/gpuprobe.hpp"

__global__ void env_kernel(int* out) { out[threadIdx.x] = threadIdx.x; }

namespace {

// The traced program: ranges and kernels, no Session, and a normal return from main.
int child() {
  int* out = nullptr;
  if (cudaMalloc(&out, 32 * sizeof(int)) != cudaSuccess) return 2;
  for (int i = 0; i < 10; ++i) {
    GPUPROBE_RANGE("env_step");
    env_kernel<<<1, 32>>>(out);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  cudaFree(out);
  return 0;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "child") return child();
  gpuprobe::gpu_test::require_device();
  const std::string trace =
      (std::filesystem::temp_directory_path() / ("env_cupti_" + std::to_string(getpid()) + ".json"))
          .string();
  const std::string command = "GPUPROBE='chrome=" + trace + ",cupti=all' '" + argv[0] + "' child";
  const int status = std::system(command.c_str());
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(trace);
  const std::string json = text.str();
  CHECK(count(json, "\"cat\":\"kernel\"") == 10);
  CHECK(count(json, "\"range\":\"env_step\"") >= 10);  // the kernels and their launch calls
  CHECK(json.find("\"status\": \"cupti\"") != std::string::npos);
  return gpuprobe::gpu_test::finish();
}
