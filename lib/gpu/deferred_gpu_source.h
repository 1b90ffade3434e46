// CUPTI that starts when the program initializes CUDA (`cupti_start=cuda`), not with the session:
// the driver calls gpuprobe's CUDA injection entry point inside cuInit (session/cuda_injection.cc),
// which activates this source. Until then it is the CUDA-event timing of gpuprobe::launch(), and
// a process that never initializes CUDA never loads CUPTI — nor initializes CUDA, so that the
// children it forks may still use it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/gpu_source.h"
#include "gpu/gpu_options.h"

namespace gpuprobe::gpu {

class DeferredGpuSource final : public core::GpuSource {
 public:
  DeferredGpuSource(const GpuOptions& options, const core::Calibration& calibration);
  ~DeferredGpuSource() override;

  // CUDA's initialization, on the thread that runs it: starts CUPTI, once. False when CUPTI does
  // not start (`why` says why) and when it was tried before or the source is disabled (`why`
  // empty).
  // `inside_cuda_init` false: the session starts after the program initialized CUDA.
  bool activate(std::string* why, bool inside_cuda_init = true);

  bool wants_ranges() const override { return wants_ranges_; }
  void add_thread(std::uint32_t pthread_id, std::int64_t os_tid) override;
  void thread_state(std::int64_t os_tid, bool idle, std::uint64_t now) override;
  void add_range(std::int64_t os_tid, std::uint64_t begin, std::uint64_t end,
                 const CallSite* site) override;
  void add_api_call(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                    std::uint64_t end, const CallSite* site, std::uint32_t correlation) override;
  void collect(std::uint64_t now, bool final, std::vector<GpuActivity>* out) override;
  void record_until(std::uint64_t tick) override { current()->record_until(tick); }
  void take_switches(std::vector<core::RecordingSwitch>* out) override;
  void disable() override;
  void finalize() override;
  // The status says whether CUDA's initialization came and CUPTI started.
  void fill_stats(GpuStats* out) const override;
  const std::vector<DeviceInfo>& devices() const override { return current()->devices(); }

 private:
  core::GpuSource* current() const;
  // On the collector's thread: the started source learns the threads seen before it started.
  core::GpuSource* collector_view();

  const GpuOptions options_;
  const core::Calibration calibration_;
  const bool wants_ranges_;
  std::unique_ptr<core::GpuSource> before_;  // CUDA-event timing, until CUPTI starts
  std::unique_ptr<core::GpuSource> started_;
  std::atomic<core::GpuSource*> active_{nullptr};
  std::mutex mu_;  // activate() against disable()
  bool tried_ = false;
  bool disabled_ = false;
  std::string failure_;  // why CUPTI did not start; written before `failed_`
  std::atomic<bool> failed_{false};
  // The collector's thread only: the threads it named before CUPTI started.
  std::vector<std::pair<std::uint32_t, std::int64_t>> threads_;
  bool threads_told_ = false;
};

}  // namespace gpuprobe::gpu
