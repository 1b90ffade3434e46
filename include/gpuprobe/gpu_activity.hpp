/// @file gpu_activity.hpp
/// @brief GPU work and CUDA API calls as gpuprobe records them (from CUPTI), on the same clock
/// as CPU events.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe {

/// What a GpuActivity describes. The names in comments are the Chrome-trace categories
/// (`cat`) Kineto writes for them.
enum class GpuActivityKind : std::uint8_t {
  kKernel,      ///< A kernel execution ("kernel").
  kMemcpy,      ///< A memory copy ("gpu_memcpy").
  kMemset,      ///< A memory set ("gpu_memset").
  kRuntimeApi,  ///< A CUDA runtime API call on a host thread ("cuda_runtime").
  kDriverApi,   ///< A CUDA driver API call on a host thread ("cuda_driver").
  kSync,        ///< A synchronization: stream/event/context sync, stream wait ("cuda_sync").
  kOverhead,    ///< Time CUPTI itself spent, e.g. flushing buffers ("overhead").
};

/// With `gpu_burst=ON/EVERY` GPU activity is recorded in bursts, and the trace says when: a
/// counter of this name (category "cuda", on a row named "gpuprobe") is 1 from each moment
/// recording switched on and 0 from each moment it switched off. Figures computed from GPU
/// activity then cover only the time it was 1.
inline constexpr char kGpuRecordingCounter[] = "gpuprobe GPU recording";

/// Copy directions, as CUPTI reports them (CUpti_ActivityMemcpyKind).
enum class MemcpyKind : std::uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
};

/// The short name of a copy direction ("HtoD", "DtoH", ...; "Unknown" outside the enum), as
/// copy names ("Memcpy HtoD (Pinned -> Device)") and reports spell it.
constexpr const char* memcpy_kind_name(MemcpyKind kind) noexcept {
  constexpr const char* kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                    "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  const auto i = static_cast<std::size_t>(kind);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "Unknown";
}

/// Memory kinds at either end of a copy (CUpti_ActivityMemoryKind).
enum class MemoryKind : std::uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

/// Synchronization kinds (CUpti_ActivitySynchronizationType).
enum class SyncKind : std::uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

/// One GPU activity or CUDA API call. Times are ticks of the session's clock (CUPTI is made to
/// stamp records with it), so they convert with the same TimeBase as CPU events.
struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kKernel;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  /// Kernel name (demangled), copy/memset description, or API function name. Lives for the
  /// whole process.
  const char* name = "";
  std::uint32_t correlation = 0;  ///< Links a launch (API call) to its GPU work.
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;

  // Kernels.
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::int32_t static_shared_memory = 0;
  std::int32_t dynamic_shared_memory = 0;
  std::uint32_t graph_id = 0;       ///< Non-zero for work launched from a CUDA graph.
  std::uint64_t graph_node_id = 0;  ///< The graph node, for graph launches.

  /// Declared through gpuprobe::launch(): bytes moved and floating-point operations; 0 when
  /// not declared.
  double declared_bytes = 0;
  double declared_flops = 0;

  // Copies and sets.
  std::uint64_t bytes = 0;
  MemcpyKind copy_kind = MemcpyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;

  // API calls.
  std::uint32_t cbid = 0;  ///< CUPTI callback id of the function.
  /// The calling thread as CUPTI identifies it: the low 32 bits of its pthread_self().
  std::uint32_t thread_id = 0;
  /// The calling thread's kernel id (gettid), as CPU events use it, when that thread has recorded
  /// gpuprobe events in this session; 0 when gpuprobe cannot tell.
  std::int64_t os_tid = 0;
  std::uint32_t process_id = 0;

  /// The innermost gpuprobe range open on the launching thread around the API call that
  /// launched this work (for API calls: around the call itself); nullptr when there was none, or
  /// gpuprobe could not tell (the thread recorded no gpuprobe events, or runtime/driver API
  /// recording is off).
  const CallSite* range = nullptr;

  // Synchronization.
  SyncKind sync_kind = SyncKind::kUnknown;
  std::uint32_t cuda_event_id = 0;
};

}  // namespace gpuprobe
