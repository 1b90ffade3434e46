#include "formats/kineto.h"

#include <cstring>

namespace gpuprobe::formats {
namespace {

bool has_prefix(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

const char* chrome_gpu_category(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::kKernel:
      return "kernel";
    case GpuActivityKind::kMemcpy:
      return "gpu_memcpy";
    case GpuActivityKind::kMemset:
      return "gpu_memset";
    case GpuActivityKind::kRuntimeApi:
      return "cuda_runtime";
    case GpuActivityKind::kDriverApi:
      return "cuda_driver";
    case GpuActivityKind::kSync:
      return "cuda_sync";
    case GpuActivityKind::kOverhead:
      return "overhead";
  }
  return "gpu";
}

bool gpu_kind_of_category(std::string_view category, GpuActivityKind* kind) {
  for (int k = 0; k <= static_cast<int>(GpuActivityKind::kOverhead); ++k) {
    if (category == chrome_gpu_category(static_cast<GpuActivityKind>(k))) {
      *kind = static_cast<GpuActivityKind>(k);
      return true;
    }
  }
  return false;
}

bool starts_flow(const char* api_name) {
  static constexpr const char* kPrefixes[] = {"cudaLaunch",
                                              "cuLaunch",
                                              "cudaGraphLaunch",
                                              "cuGraphLaunch",
                                              "cudaMemcpy",
                                              "cudaMemset",
                                              "cuMemcpy",
                                              "cuMemset",
                                              "cudaStreamSynchronize",
                                              "cudaDeviceSynchronize",
                                              "cudaStreamWaitEvent",
                                              "cudaEventSynchronize",
                                              "cuStreamSynchronize",
                                              "cuCtxSynchronize",
                                              "cuStreamWaitEvent",
                                              "cuEventSynchronize"};
  for (const char* prefix : kPrefixes) {
    if (has_prefix(api_name, prefix)) return true;
  }
  return false;
}

const char* sync_kind_name(SyncKind kind) {
  switch (kind) {
    case SyncKind::kEventSynchronize:
      return "Event Sync";
    case SyncKind::kStreamWaitEvent:
      return "Stream Wait Event";
    case SyncKind::kStreamSynchronize:
      return "Stream Sync";
    case SyncKind::kContextSynchronize:
      return "Context Sync";
    case SyncKind::kUnknown:
      break;
  }
  return "Unknown Sync";
}

SyncKind sync_kind_from_name(std::string_view name) {
  for (int k = 1; k <= static_cast<int>(SyncKind::kContextSynchronize); ++k) {
    if (name == sync_kind_name(static_cast<SyncKind>(k))) return static_cast<SyncKind>(k);
  }
  return SyncKind::kUnknown;
}

}  // namespace gpuprobe::formats
