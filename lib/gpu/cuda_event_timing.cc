#include "gpu/cuda_event_timing.h"

namespace gpuprobe::gpu {

// No horizon: without CUPTI a note waits for its CUDA events until the session's last drain.
CudaEventTiming::CudaEventTiming(const TimeBase& time) : kernel_notes_(time.ns_per_tick(), 0) {}

void CudaEventTiming::collect(std::uint64_t, bool final, std::vector<GpuActivity>* out) {
  kernel_notes_.collect();
  kernel_notes_.timed(final, out);
}

}  // namespace gpuprobe::gpu
