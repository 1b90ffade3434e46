// Kineto's vocabulary in Chrome trace JSON, from PyTorch 1.8 (2021) to today, in one place that
// the Chrome and Perfetto writers, both readers, the report's analyses and the tools share: what
// each `cat` is (GPU work, an API call, a CPU range), which API calls launch, copy, set or wait
// for device work (CUDA, HIP, MTIA, XPU), and where GPU work and API calls are placed (GPU work on
// a "GPU n" process with one thread per stream, API calls on the calling thread).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe::formats {

// One `cat` a Kineto trace may carry: GPU work or an API call of `kind` (`gpu`), or else a CPU
// range of `category`. Several names mean one thing: the capitalised ones of PyTorch 1.8-1.11,
// other accelerators' runtimes.
struct KinetoCategory {
  const char* name;
  bool gpu;
  GpuActivityKind kind;  // when `gpu`
  Category category;     // when not
};

// Every `cat` gpuprobe knows: for each GpuActivityKind the name gpuprobe writes comes first.
struct KinetoCategoryTable {
  const KinetoCategory* begin() const;
  const KinetoCategory* end() const;
};
KinetoCategoryTable kineto_categories();

// The entry for `category`, matched exactly; nullptr for names not in the table.
const KinetoCategory* find_kineto_category(std::string_view category);

// Kineto's `cat` for a kind ("kernel", "gpu_memcpy", "cuda_runtime", ...): what gpuprobe writes.
const char* chrome_gpu_category(GpuActivityKind kind);

// The kind of GPU work or API call that `category` names, in any Kineto version ("kernel" and
// "Kernel", "cuda_runtime" and "Runtime", "mtia_ccp_events", "xpu_runtime", ...); false for CPU
// categories and unknown names.
bool gpu_kind_of_category(std::string_view category, GpuActivityKind* kind);

// What an API call does to device work, from its name: CUDA runtime and driver calls, HIP (ROCm),
// MTIA's job submission and Intel's unified runtime, each where its CUDA counterpart is.
enum class ApiRole : std::uint8_t {
  kOther,       // no device work: allocations, queries, ...
  kLaunch,      // a kernel or graph launch: cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, ...
  kCopy,        // cudaMemcpyAsync, hipMemcpyWithStream, urEnqueueUSMMemcpy, ...
  kSet,         // cudaMemsetAsync, hipMemsetAsync, urEnqueueUSMFill, ...
  kSync,        // the host waits: cudaStreamSynchronize, hipDeviceSynchronize, ...
  kStreamWait,  // a stream waits for an event: cudaStreamWaitEvent, hipStreamWaitEvent
};
ApiRole api_role(std::string_view api_name);

// True for API calls that launch or wait for GPU work (api_role() other than kOther): they start
// an "ac2g" flow, and their correlation id links them to that work.
inline bool starts_flow(const char* api_name) {
  return api_name != nullptr && api_role(api_name) != ApiRole::kOther;
}

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
