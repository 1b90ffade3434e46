// The GPU pipeline behind CUPTI, as the collector's GpuSource: raw records from the backend,
// checked against their launch calls (LaunchMatcher), held until the range around their launch is
// known (RangeAttribution), and given the declared cost of gpuprobe::launch() (KernelNoteTracker).
// It runs on the collector thread, so that nothing of it touches the recording path.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "core/gpu_source.h"
#include "gpu/activity_source.h"
#include "gpu/burst_schedule.h"
#include "gpu/kernel_notes.h"
#include "gpu/launch_matcher.h"
#include "gpu/range_attribution.h"

namespace gpuprobe::gpu {

// Recording in bursts (gpu_burst=ON/EVERY), from `start`; `every_ns` 0: all the time.
struct BurstOptions {
  std::int64_t on_ns = 0;
  std::int64_t every_ns = 0;
  std::uint64_t start = 0;  // ticks
};

class GpuPipeline : public core::GpuSource {
 public:
  // `attribute`: give GPU work the range around its launch (it needs API records, which name the
  // launching thread), waiting up to `attribution_horizon` for that range to close.
  GpuPipeline(std::unique_ptr<ActivitySource> backend, const TimeBase& time, bool attribute,
              std::chrono::milliseconds attribution_horizon, BurstOptions bursts = {});

  bool wants_ranges() const override { return attribution_ != nullptr; }
  void add_thread(std::uint32_t pthread_id, std::int64_t os_tid) override;
  void thread_state(std::int64_t os_tid, bool idle, std::uint64_t now) override;
  void add_range(std::int64_t os_tid, std::uint64_t begin, std::uint64_t end,
                 const CallSite* site) override;
  void add_api_call(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                    std::uint64_t end, const CallSite* site, std::uint32_t correlation) override {
    backend_->add_api_call(os_tid, pthread_id, begin, end, site, correlation);
  }
  void collect(std::uint64_t now, bool final, std::vector<GpuActivity>* out) override;
  void record_until(std::uint64_t tick) override { bursts_.record_until(tick); }
  void take_switches(std::vector<core::RecordingSwitch>* out) override;
  void disable() override;
  void finalize() override { backend_->finalize(); }
  void fill_stats(GpuStats* out) const override;
  const std::vector<DeviceInfo>& devices() const override { return backend_->devices(); }

 private:
  // With bursts: switches the backend on or off as the schedule says at `now`.
  void follow_schedule(std::uint64_t now, bool final);

  std::unique_ptr<ActivitySource> backend_;
  const double ns_per_tick_;
  BurstSchedule bursts_;
  bool recording_ = true;  // the backend records when it starts
  std::uint64_t recording_since_ = 0;
  std::uint64_t bursts_seen_ = 0;
  std::uint64_t recorded_ticks_ = 0;  // in bursts that ended
  bool switch_failed_ = false;        // said once
  // The session's stop disables the backend from its own thread while the collector may be
  // switching it: one at a time, and no switch after.
  std::mutex switch_mu_;
  bool disabled_ = false;
  std::vector<core::RecordingSwitch> switches_;
  LaunchMatcher launches_;
  KernelNoteTracker kernel_notes_;
  std::unique_ptr<RangeAttribution> attribution_;  // null without attribution
  std::vector<GpuActivity> raw_;                   // reused across drains
};

}  // namespace gpuprobe::gpu
