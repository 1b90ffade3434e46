// GPU activity and CUDA API calls as Kineto writes them in Chrome trace JSON: kernels, copies,
// sets and syncs on "GPU n" processes with one thread per stream, API calls on the calling
// thread, and "ac2g" flow arrows from each launch to its GPU work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuprobe/gpu_activity.hpp"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::sinks {

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

// The pid GPU work of `device` is shown under, and the one for CUPTI's own overhead.
inline std::int64_t gpu_pid(std::uint32_t device) { return device; }
inline constexpr std::int64_t kOverheadPid = -1;

// Appends `a` as one complete event, followed by its flow event when it has one (",\n" between
// them). Timestamps are microseconds after `base_ns`; `host_pid` is the process's pid.
void append_gpu_event(std::string* out, const GpuActivity& a, const TimeBase& time,
                      std::int64_t base_ns, std::int64_t host_pid);

}  // namespace gpuprobe::sinks
