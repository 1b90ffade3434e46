// A GPU activity backend: raw records, in the session's clock, before the GPU pipeline
// (gpu_pipeline.h) matches, attributes and annotates them. CUPTI (cupti/cupti_tracer.h) is the
// one backend; builds without CUPTI's headers get a start function that says why not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "gpuprobe/call_site.hpp"
#include "gpuprobe/gpu_activity.hpp"
#include "gpuprobe/status.hpp"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::gpu {

struct ActivityOptions {
  std::uint32_t kinds = 0;  // core::gpu_kind_bit()s
  std::size_t buffer_count = 0;
  std::size_t buffer_bytes = 0;
  std::size_t max_bytes = 0;  // the pool grows on demand up to this
  core::ClockSource clock = core::ClockSource::kMonotonic;
  bool all_api = false;  // every runtime and driver call, not only gpu/cupti/api_selection.h's
  // The selected calls come from the backend's callbacks through the threads' rings, not from
  // its API activity records (never with all_api).
  bool api_callbacks = true;
  // Between bursts: how long the kernels launched before a burst's end get to finish (and be
  // timed) before the backend is let go of; what still runs then is lost, counted.
  std::int64_t burst_drain_ns = 20'000'000;
  // Started from CUDA's injection entry point, inside cuInit: the driver is not queried.
  bool inside_cuda_init = false;
};

struct ActivityStats {
  std::uint64_t dropped = 0;            // records the backend reports it dropped
  std::uint64_t buffers_exhausted = 0;  // buffer requests the pool could not serve
  std::uint64_t filtered = 0;           // API calls dropped as noise
  std::uint64_t untimed = 0;            // of `dropped`: GPU work handed back without timestamps
};

class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // An API call the backend's callbacks recorded (core::GpuSource::add_api_call): it comes out
  // of the next collect() as an API record.
  virtual void add_api_call(std::int64_t /*os_tid*/, std::uint32_t /*pthread_id*/,
                            std::uint64_t /*begin*/, std::uint64_t /*end*/,
                            const CallSite* /*site*/, std::uint32_t /*correlation*/) {}
  // Appends every record delivered so far. `final` forces out incomplete buffers.
  virtual void collect(bool final, std::vector<GpuActivity>* out) = 0;
  // Switches recording off and on again while the session runs (gpu_burst=): off, the program
  // pays nothing of the backend's per-call costs. Records of work that was in flight at a switch
  // may or may not come.
  [[nodiscard]] virtual Status set_recording(bool on) = 0;
  virtual void disable() = 0;
  virtual void finalize() = 0;
  virtual ActivityStats stats() const = 0;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
};

// Starts recording the kinds in `options`, or returns nullptr and says why in `why` (the text
// after "CUPTI unavailable: ").
std::unique_ptr<ActivitySource> start_activity_source(const ActivityOptions& options,
                                                      std::string* why);

// Whether this process has initialized CUDA already (the driver is loaded and cuInit ran),
// found out without initializing it.
bool cuda_initialized_in_process();

}  // namespace gpuprobe::gpu
