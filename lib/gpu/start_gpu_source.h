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
  bool deferred = false;                    // a DeferredGpuSource: CUPTI at CUDA's init
  std::string status;                       // GpuStats::status
};

// CUPTI with the GPU pipeline when `cupti=` names kinds and CUPTI starts; otherwise the CUDA-event
// timing of gpuprobe::launch(), with the reason CUPTI did not start in `status`.
// `cupti_start=cuda` gives a DeferredGpuSource (deferred_gpu_source.h), which CUDA's
// initialization starts.
StartedGpuSource start_gpu_source(const GpuOptions& options, const core::Calibration& calibration);

// Whether the GPU pipeline attributes GPU work to ranges: it needs API records, which name the
// thread that launched the work.
bool attributes_to_ranges(const GpuOptions& options);

// CUPTI and the GPU pipeline behind it; null, and why, when CUPTI does not start.
// `inside_cuda_init`: called from the driver's initialization (the driver is not queried).
std::unique_ptr<core::GpuSource> start_cupti_pipeline(const GpuOptions& options,
                                                      const core::Calibration& calibration,
                                                      bool inside_cuda_init, std::string* why);

}  // namespace gpuprobe::gpu
