/// @file cuda.hpp
/// @brief `gpuprobe::launch`: launching a kernel through gpuprobe, for kernel authors.
///
/// Include it from translation units that use the CUDA runtime (compiled by nvcc or by a host
/// compiler linking cudart). The launch is recorded as a range (category `cuda`) named after the
/// kernel, with its grid, block and dynamic shared memory and, when declared, the bytes it moves
/// and the floating-point operations it performs, so reports can place it on a roofline. While a
/// session records CUPTI activity, CUPTI's kernel record carries these; otherwise gpuprobe times
/// the kernel with CUDA events itself (the first such launch of a session synchronizes an idle
/// stream once to tie CUDA-event time to gpuprobe's clock).
///
/// @code
/// gpuprobe::launch("saxpy", {3.0 * n * sizeof(float), 2.0 * n}, saxpy, grid, block, 0, stream,
///                  n, a, x, y);
/// @endcode
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string_view>
#include <tuple>
#include <utility>

#include "gpuprobe/detail/kernel_note.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe {

/// What a kernel launch is declared to do: bytes moved to and from device memory and
/// floating-point operations. Zero means "not declared".
struct KernelCost {
  double bytes = 0;
  double flops = 0;
};

namespace detail {

inline const CudaEventOps* cuda_event_ops() noexcept {
  static const CudaEventOps ops{[](void* e) {
                                  const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e));
                                  return r == cudaSuccess ? 1 : r == cudaErrorNotReady ? 0 : -1;
                                },
                                [](void* start, void* end, float* ms) {
                                  return cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start),
                                                              static_cast<cudaEvent_t>(end)) ==
                                         cudaSuccess;
                                },
                                [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }};
  return &ops;
}

// Records an event on a fresh, idle stream and waits for it, so the CPU time just after the wait
// is the event's time to within the wake-up latency (microseconds).
inline void* record_anchor(std::uint64_t gate, std::uint64_t* ticks) noexcept {
  cudaStream_t idle = nullptr;
  cudaEvent_t event = nullptr;
  if (cudaStreamCreateWithFlags(&idle, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  const bool ok = cudaEventCreate(&event) == cudaSuccess &&
                  cudaEventRecord(event, idle) == cudaSuccess &&
                  cudaEventSynchronize(event) == cudaSuccess;
  *ticks = now_ticks(gate);
  cudaStreamDestroy(idle);
  if (!ok && event != nullptr) cudaEventDestroy(event);
  return ok ? event : nullptr;
}

}  // namespace detail

/// Launches `kernel<<<grid, block, dynamic_smem, stream>>>(args...)` and records it under
/// `name`, with its declared `cost`. Returns what the launch returned (cudaGetLastError()).
/// With no session recording, it is the plain launch plus one relaxed load.
template <class... Params, class... Args>
cudaError_t launch(std::string_view name, const KernelCost& cost, void (*kernel)(Params...),
                   dim3 grid, dim3 block, std::size_t dynamic_smem, cudaStream_t stream,
                   Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "launch: wrong number of kernel arguments");
  // The arguments converted to the kernel's parameter types, as cudaLaunchKernel needs them.
  std::tuple<Params...> params(std::forward<Args>(args)...);
  void* pointers[sizeof...(Params) + 1] = {};
  std::apply(
      [&pointers](auto&... p) {
        int i = 0;
        ((pointers[i++] = static_cast<void*>(&p)), ...);
      },
      params);
  const auto plain = [&] {
    return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers,
                            dynamic_smem, stream);
  };
  const std::uint64_t gate = detail::gate_for(Category::kCuda);
  if (GPUPROBE_LIKELY(gate == 0)) return plain();

  // The range makes CUPTI attribute the kernel to `name`; the note carries what CUPTI cannot know.
  ScopedRange range(name, Category::kCuda);
  detail::KernelNote note{};
  note.site = detail::intern(name, Category::kCuda);
  int device = 0;
  cudaGetDevice(&device);
  note.device = static_cast<std::uint32_t>(device);
  unsigned long long stream_id = 0;
  if (cudaStreamGetId(stream, &stream_id) == cudaSuccess) note.stream = stream_id;
  note.grid[0] = grid.x, note.grid[1] = grid.y, note.grid[2] = grid.z;
  note.block[0] = block.x, note.block[1] = block.y, note.block[2] = block.z;
  note.dynamic_shared_memory = static_cast<std::uint32_t>(dynamic_smem);
  note.bytes = cost.bytes;
  note.flops = cost.flops;
  cudaEvent_t start = nullptr, end = nullptr;
  if (!detail::cupti_recording()) {
    note.ops = detail::cuda_event_ops();
    note.anchor_event =
        detail::event_anchor(note.device, &detail::record_anchor, note.ops, &note.anchor_ticks);
    if (note.anchor_event != nullptr && cudaEventCreate(&start) == cudaSuccess) {
      if (cudaEventCreate(&end) == cudaSuccess) {
        cudaEventRecord(start, stream);
      } else {
        cudaEventDestroy(start);
        start = nullptr;
        end = nullptr;
      }
    }
  }
  note.begin = detail::now_ticks(gate);
  const cudaError_t result = plain();
  if (end != nullptr) cudaEventRecord(end, stream);
  note.end = detail::now_ticks(gate);
  note.start_event = start;
  note.end_event = end;
  if (!detail::note_kernel_launch(note)) {
    if (start != nullptr) cudaEventDestroy(start);
    if (end != nullptr) cudaEventDestroy(end);
  }
  return result;
}

/// The same, with no declared cost.
template <class... Params, class... Args>
cudaError_t launch(std::string_view name, void (*kernel)(Params...), dim3 grid, dim3 block,
                   std::size_t dynamic_smem, cudaStream_t stream, Args&&... args) {
  return launch(name, KernelCost{}, kernel, grid, block, dynamic_smem, stream,
                std::forward<Args>(args)...);
}

}  // namespace gpuprobe
