#include "gpu/start_gpu_source.h"

#include "gpu/activity_source.h"
#include "gpu/cuda_event_timing.h"
#include "gpu/deferred_gpu_source.h"
#include "gpu/gpu_pipeline.h"

namespace gpuprobe::gpu {

bool attributes_to_ranges(const GpuOptions& options) {
  return (options.kinds & (core::gpu_kind_bit(GpuActivityKind::kRuntimeApi) |
                           core::gpu_kind_bit(GpuActivityKind::kDriverApi))) != 0;
}

std::unique_ptr<core::GpuSource> start_cupti_pipeline(const GpuOptions& options,
                                                      const core::Calibration& calibration,
                                                      bool inside_cuda_init, std::string* why) {
  ActivityOptions activity{options.kinds,        options.buffers,      options.buffer_kb << 10,
                           options.max_mb << 20, calibration.source(), options.all_api,
                           options.api_callbacks};
  activity.inside_cuda_init = inside_cuda_init;
  std::unique_ptr<ActivitySource> backend = start_activity_source(activity, why);
  if (!backend) return nullptr;
  return std::make_unique<GpuPipeline>(std::move(backend), calibration.time_base(),
                                       attributes_to_ranges(options),
                                       std::chrono::milliseconds(options.attribution_ms),
                                       BurstOptions{options.burst_on_ns, options.burst_every_ns,
                                                    core::read_ticks(calibration.source())});
}

StartedGpuSource start_gpu_source(const GpuOptions& options, const core::Calibration& calibration) {
  StartedGpuSource started;
  started.status = "off";
  if (options.kinds != 0 && options.start_at_cuda_init) {
    started.source = std::make_unique<DeferredGpuSource>(options, calibration);
    started.deferred = true;
    started.status = "cupti_start=cuda: waiting for the process to initialize CUDA";
    return started;
  }
  if (options.kinds != 0) {
    std::string why;
    started.source = start_cupti_pipeline(options, calibration, false, &why);
    if (started.source) {
      started.cupti = true;
      started.status = "cupti";
      return started;
    }
    started.status = "CUPTI unavailable: " + why;
  }
  started.source = std::make_unique<CudaEventTiming>(calibration.time_base());
  return started;
}

}  // namespace gpuprobe::gpu
