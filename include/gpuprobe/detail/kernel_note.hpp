/// @file detail/kernel_note.hpp
/// @brief What gpuprobe::launch() tells the library about one kernel launch.
///
/// Never include this header directly: include <gpuprobe/cuda.hpp>. Its contents may change in
/// any release. No CUDA types appear here, so the library builds without the CUDA toolkit; the
/// CUDA calls the collector needs come as function pointers compiled in the caller's translation
/// unit, against the caller's own CUDA runtime (which may be linked statically).
#pragma once

#include <cstdint>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::detail {

/// The CUDA runtime functions the collector uses to read a launch's CUDA events.
struct CudaEventOps {
  /// 1 when the event has completed, 0 while pending, -1 on error (cudaEventQuery).
  int (*query)(void* event);
  /// Milliseconds from `start` to `end`; false on error (cudaEventElapsedTime).
  bool (*elapsed_ms)(void* start, void* end, float* ms);
  void (*destroy)(void* event);  ///< cudaEventDestroy
};

/// One launch through gpuprobe::launch().
struct KernelNote {
  const CallSite* site;  ///< The launch's name.
  std::uint64_t begin;   ///< Ticks around the launch call.
  std::uint64_t end;
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t dynamic_shared_memory;
  std::uint32_t device;
  std::uint64_t stream;  ///< cudaStreamGetId, or 0 when unknown.
  double bytes;          ///< Declared bytes moved; 0 when not declared.
  double flops;          ///< Declared floating-point operations; 0 when not declared.
  /// CUDA events around the kernel, when gpuprobe times it itself (no CUPTI recording): the
  /// anchor event was recorded and synchronized at the CPU time `anchor_ticks`.
  void* start_event;
  void* end_event;
  void* anchor_event;
  std::uint64_t anchor_ticks;
  const CudaEventOps* ops;
  /// Filled by note_kernel_launch(): the calling thread as CUPTI names it.
  std::uint32_t cupti_thread_id;
};

/// Hands a launch to the collector. Thread-safe; takes a lock (a launch costs microseconds
/// anyway). Returns false when no session records, or the note queue is full (counted).
bool note_kernel_launch(const KernelNote& note) noexcept;

/// True while a session records GPU activity through CUPTI: launches then need no CUDA events.
bool cupti_recording() noexcept;

/// The anchor event for `device` in the running session: recorded on an idle stream and
/// synchronized once per session and device by `record_and_sync`, which returns the event and
/// the session-clock ticks right after it completed (nullptr on failure). CUDA-event times are
/// placed on gpuprobe's clock relative to it.
void* event_anchor(std::uint32_t device,
                   void* (*record_and_sync)(std::uint64_t gate, std::uint64_t* ticks),
                   const CudaEventOps* ops, std::uint64_t* anchor_ticks) noexcept;

}  // namespace gpuprobe::detail
