// Kineto's vocabulary for GPU activity in Chrome trace JSON, which the Chrome and Perfetto
// writers, both readers, the report and the tools share: the `cat` of each kind, which API calls
// start an "ac2g" flow to their GPU work, and where GPU work and API calls are placed (GPU work
// on a "GPU n" process with one thread per stream, API calls on the calling thread).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe::formats {

// Kineto's `cat` for a kind ("kernel", "gpu_memcpy", "cuda_runtime", ...).
const char* chrome_gpu_category(GpuActivityKind kind);

// The kind whose chrome_gpu_category() is `category`; false for other categories.
bool gpu_kind_of_category(std::string_view category, GpuActivityKind* kind);

// True for API calls that launch or wait for GPU work (kernel launches, graph launches, copies,
// sets, synchronizations): they start an "ac2g" flow.
bool starts_flow(const char* api_name);

// The tid an API call is shown under: the calling thread's gettid() when gpuprobe knows it (so
// the call sits inside that thread's ranges), else CUPTI's own id for the thread.
inline std::int64_t api_thread_tid(const GpuActivity& a) {
  return a.os_tid != 0 ? a.os_tid : std::int64_t{a.thread_id};
}

// The name of a synchronization as Kineto shows it ("Event Sync", "Stream Wait Event", "Stream
// Sync", "Context Sync", "Unknown Sync"), and the kind such a name stands for.
const char* sync_kind_name(SyncKind kind);
SyncKind sync_kind_from_name(std::string_view name);

// The pid GPU work of `device` is shown under, and the one for CUPTI's own overhead.
inline std::int64_t gpu_pid(std::uint32_t device) { return device; }
inline constexpr std::int64_t kOverheadPid = -1;

}  // namespace gpuprobe::formats
