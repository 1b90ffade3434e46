#include "gpu/start_gpu_source.h"

#include "gpu/activity_source.h"
#include "gpu/cuda_event_timing.h"
#include "gpu/gpu_pipeline.h"

namespace gpuprobe::gpu {

StartedGpuSource start_gpu_source(const GpuOptions& options, const core::Calibration& calibration) {
  StartedGpuSource started;
  started.status = "off";
  const TimeBase time = calibration.time_base();
  if (options.kinds != 0) {
    std::string why;
    std::unique_ptr<ActivitySource> backend = start_activity_source(
        ActivityOptions{options.kinds, options.buffers, options.buffer_kb << 10,
                        options.max_mb << 20, calibration.source(), options.all_api,
                        options.api_callbacks},
        &why);
    if (backend) {
      // Attribution needs API records: they name the thread that launched the work.
      const bool api = (options.kinds & (core::gpu_kind_bit(GpuActivityKind::kRuntimeApi) |
                                         core::gpu_kind_bit(GpuActivityKind::kDriverApi))) != 0;
      started.source = std::make_unique<GpuPipeline>(
          std::move(backend), time, api, std::chrono::milliseconds(options.attribution_ms),
          BurstOptions{options.burst_on_ns, options.burst_every_ns,
                       core::read_ticks(calibration.source())});
      started.cupti = true;
      started.status = "cupti";
      return started;
    }
    started.status = "CUPTI unavailable: " + why;
  }
  started.source = std::make_unique<CudaEventTiming>(time);
  return started;
}

}  // namespace gpuprobe::gpu
