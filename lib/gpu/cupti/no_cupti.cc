// start_activity_source() for builds without the CUPTI headers.
#include "gpu/activity_source.h"

namespace gpuprobe::gpu {

std::unique_ptr<ActivitySource> start_activity_source(const ActivityOptions&, std::string* why) {
  *why = "gpuprobe was built without the CUDA toolkit's CUPTI headers";
  return nullptr;
}

bool cuda_initialized_in_process() { return false; }

}  // namespace gpuprobe::gpu
