// The GPU source a session's config asks for, built by the session layer.
#pragma once

#include <memory>
#include <string>

#include "core/clock.h"
#include "core/gpu_source.h"
#include "gpu/gpu_options.h"

namespace gpuprobe::gpu {

struct StartedGpuSource {
  std::unique_ptr<core::GpuSource> source;  // never null
  bool cupti = false;                       // CUPTI records (else: CUDA-event timing)
  std::string status;                       // GpuStats::status
};

// CUPTI with the GPU pipeline when `cupti=` names kinds and CUPTI starts; otherwise the CUDA-event
// timing of gpuprobe::launch(), with the reason CUPTI did not start in `status`.
StartedGpuSource start_gpu_source(const GpuOptions& options, const core::Calibration& calibration);

}  // namespace gpuprobe::gpu
