// GPU records for sessions without CUPTI: the kernels launched through gpuprobe::launch(), timed
// by the CUDA events the launch recorded around them (kernel_notes.h). The collector sees it as
// any other GpuSource, so that it has one path for GPU records.
#pragma once

#include <cstdint>
#include <vector>

#include "core/clock.h"
#include "core/gpu_source.h"
#include "gpu/kernel_notes.h"

namespace gpuprobe::gpu {

class CudaEventTiming : public core::GpuSource {
 public:
  explicit CudaEventTiming(const TimeBase& time);

  void collect(std::uint64_t now, bool final, std::vector<GpuActivity>* out) override;
  void fill_stats(GpuStats* out) const override { out->untimed = kernel_notes_.untimed(); }
  const std::vector<DeviceInfo>& devices() const override { return devices_; }

 private:
  KernelNoteTracker kernel_notes_;
  const std::vector<DeviceInfo> devices_;  // none known without CUPTI
};

}  // namespace gpuprobe::gpu
