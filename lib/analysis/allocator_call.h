// Which CUDA API calls are the device allocator's, by name — one rule for every analysis that
// counts them (jitter's allocator cause, memory's calls): cudaMalloc*, cuMemAlloc*, and the
// frees but cudaFreeHost (pinned host memory, not the device's).
#pragma once

#include <cstring>

namespace gpuprobe::analysis {

enum class AllocatorCall { kNone, kAlloc, kFree };

inline AllocatorCall allocator_call(const char* api_name) {
  if (api_name == nullptr) return AllocatorCall::kNone;
  if (std::strstr(api_name, "Malloc") != nullptr || std::strstr(api_name, "MemAlloc") != nullptr)
    return AllocatorCall::kAlloc;
  if (std::strstr(api_name, "Free") != nullptr && std::strstr(api_name, "FreeHost") == nullptr)
    return AllocatorCall::kFree;
  return AllocatorCall::kNone;
}

}  // namespace gpuprobe::analysis
