#include "gpu/deferred_gpu_source.h"

#include "gpu/cuda_event_timing.h"
#include "gpu/kernel_notes.h"
#include "gpu/start_gpu_source.h"

namespace gpuprobe::gpu {

DeferredGpuSource::DeferredGpuSource(const GpuOptions& options,
                                     const core::Calibration& calibration)
    : options_(options),
      calibration_(calibration),
      wants_ranges_(attributes_to_ranges(options)),
      before_(std::make_unique<CudaEventTiming>(calibration.time_base())) {}

DeferredGpuSource::~DeferredGpuSource() = default;

bool DeferredGpuSource::activate(std::string* why, bool inside_cuda_init) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tried_ || disabled_) return false;  // said already, or the session is stopping
  tried_ = true;
  started_ = start_cupti_pipeline(options_, calibration_, inside_cuda_init, why);
  if (!started_) {
    failure_ = "CUPTI unavailable: " + *why;
    failed_.store(true, std::memory_order_release);
    return false;
  }
  KernelNoteQueue::get().begin_session(true);
  active_.store(started_.get(), std::memory_order_release);
  return true;
}

core::GpuSource* DeferredGpuSource::current() const {
  core::GpuSource* active = active_.load(std::memory_order_acquire);
  return active != nullptr ? active : before_.get();
}

core::GpuSource* DeferredGpuSource::collector_view() {
  core::GpuSource* active = active_.load(std::memory_order_acquire);
  if (active == nullptr) return before_.get();
  if (!threads_told_) {
    threads_told_ = true;
    for (const auto& [pthread_id, os_tid] : threads_) active->add_thread(pthread_id, os_tid);
    threads_.clear();
    threads_.shrink_to_fit();
  }
  return active;
}

void DeferredGpuSource::add_thread(std::uint32_t pthread_id, std::int64_t os_tid) {
  if (active_.load(std::memory_order_acquire) == nullptr) threads_.emplace_back(pthread_id, os_tid);
  collector_view()->add_thread(pthread_id, os_tid);
}

void DeferredGpuSource::thread_state(std::int64_t os_tid, bool idle, std::uint64_t now) {
  collector_view()->thread_state(os_tid, idle, now);
}

void DeferredGpuSource::add_range(std::int64_t os_tid, std::uint64_t begin, std::uint64_t end,
                                  const CallSite* site) {
  collector_view()->add_range(os_tid, begin, end, site);
}

void DeferredGpuSource::add_api_call(std::int64_t os_tid, std::uint32_t pthread_id,
                                     std::uint64_t begin, std::uint64_t end, const CallSite* site,
                                     std::uint32_t correlation) {
  collector_view()->add_api_call(os_tid, pthread_id, begin, end, site, correlation);
}

void DeferredGpuSource::collect(std::uint64_t now, bool final, std::vector<GpuActivity>* out) {
  core::GpuSource* source = collector_view();
  // Records of gpuprobe::launch() timed before CUPTI started still come out.
  if (source != before_.get()) before_->collect(now, final, out);
  source->collect(now, final, out);
}

void DeferredGpuSource::take_switches(std::vector<core::RecordingSwitch>* out) {
  collector_view()->take_switches(out);
}

void DeferredGpuSource::fill_stats(GpuStats* out) const {
  current()->fill_stats(out);
  if (active_.load(std::memory_order_acquire) != nullptr) {
    out->status = "cupti (started at CUDA's initialization)";
  } else if (failed_.load(std::memory_order_acquire)) {
    out->status = failure_;
  } else {
    out->status = "cupti_start=cuda: the process never initialized CUDA";
  }
}

void DeferredGpuSource::disable() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    disabled_ = true;
  }
  if (started_) started_->disable();
  before_->disable();
}

void DeferredGpuSource::finalize() {
  if (started_) started_->finalize();
  before_->finalize();
}

}  // namespace gpuprobe::gpu
