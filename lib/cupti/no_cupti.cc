// start_gpu_source() for builds without the CUPTI headers.
#include "core/gpu_source.h"

namespace gpuprobe::core {

std::unique_ptr<GpuSource> start_gpu_source(const GpuOptions&, std::string* why) {
  *why = "gpuprobe was built without the CUDA toolkit's CUPTI headers";
  return nullptr;
}

}  // namespace gpuprobe::core
