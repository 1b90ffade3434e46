#include "gpu/gpu_pipeline.h"

#include "base/notice.h"

namespace gpuprobe::gpu {
namespace {

// GPU work can run seconds after its launch when queues are deep.
constexpr double kLaunchHorizonNs = 10e9;

}  // namespace

GpuPipeline::GpuPipeline(std::unique_ptr<ActivitySource> backend, const TimeBase& time,
                         bool attribute, std::chrono::milliseconds attribution_horizon,
                         BurstOptions bursts)
    : backend_(std::move(backend)),
      ns_per_tick_(time.ns_per_tick()),
      bursts_(bursts.start, static_cast<std::uint64_t>(bursts.on_ns / time.ns_per_tick()),
              static_cast<std::uint64_t>(bursts.every_ns / time.ns_per_tick())),
      recording_since_(bursts.start),
      launches_(static_cast<std::uint64_t>(kLaunchHorizonNs / time.ns_per_tick())),
      kernel_notes_(time.ns_per_tick(),
                    static_cast<std::uint64_t>(kLaunchHorizonNs / time.ns_per_tick())) {
  if (attribute) {
    const double ticks_per_ms = 1e6 / time.ns_per_tick();
    attribution_ = std::make_unique<RangeAttribution>(RangeAttribution::Options{
        static_cast<std::uint64_t>(static_cast<double>(attribution_horizon.count()) * ticks_per_ms),
        std::size_t{1} << 18, std::size_t{1} << 18});
  }
  if (bursts_.sampled()) {
    switches_.push_back(core::RecordingSwitch{bursts.start, true});
    bursts_seen_ = 1;
  }
}

void GpuPipeline::follow_schedule(std::uint64_t now, bool final) {
  std::lock_guard<std::mutex> lock(switch_mu_);
  const bool want = !final && !disabled_ && bursts_.recording_at(now);
  if (want == recording_) return;
  if (!final && !disabled_) {
    if (Status s = backend_->set_recording(want); !s.ok()) {
      if (!switch_failed_) {
        base::print_notice(std::string("gpu_burst: cannot switch GPU recording ") +
                           (want ? "on" : "off") + ": " + s.message() + " (said once)");
      }
      switch_failed_ = true;
      return;
    }
  }
  // Once the backend is disabled (the session stops) the burst just ends.
  recording_ = want;
  if (want) {
    recording_since_ = now;
    ++bursts_seen_;
  } else {
    recorded_ticks_ += now - recording_since_;
  }
  switches_.push_back(core::RecordingSwitch{now, want});
}

void GpuPipeline::disable() {
  std::lock_guard<std::mutex> lock(switch_mu_);
  disabled_ = true;
  backend_->disable();
}

void GpuPipeline::take_switches(std::vector<core::RecordingSwitch>* out) {
  out->insert(out->end(), switches_.begin(), switches_.end());
  switches_.clear();
}

void GpuPipeline::add_thread(std::uint32_t pthread_id, std::int64_t os_tid) {
  if (attribution_) attribution_->add_thread(pthread_id, os_tid);
}

void GpuPipeline::thread_state(std::int64_t os_tid, bool idle, std::uint64_t now) {
  if (attribution_) attribution_->thread_state(os_tid, idle, now);
}

void GpuPipeline::add_range(std::int64_t os_tid, std::uint64_t begin, std::uint64_t end,
                            const CallSite* site) {
  if (attribution_) attribution_->add_range(os_tid, begin, end, site);
}

void GpuPipeline::collect(std::uint64_t now, bool final, std::vector<GpuActivity>* out) {
  kernel_notes_.collect();
  // Switched before the records are fetched, so that a burst's last records come with it.
  if (bursts_.sampled()) follow_schedule(now, final);
  raw_.clear();
  backend_->collect(final, &raw_);
  for (const GpuActivity& a : raw_) {
    if (a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi) {
      launches_.on_launch(a.correlation, a.start);
    } else if (a.correlation != 0 && a.kind != GpuActivityKind::kOverhead) {
      launches_.on_work(a.correlation, a.start);
    }
  }
  launches_.prune();
  const std::size_t first = out->size();
  if (attribution_) {
    // Activities wait until the range around their launch is known.
    for (const GpuActivity& a : raw_) attribution_->add_activity(a);
    attribution_->release(now, final, out);
  } else {
    out->insert(out->end(), raw_.begin(), raw_.end());
  }
  kernel_notes_.annotate(out, first, now);
}

void GpuPipeline::fill_stats(GpuStats* out) const {
  const ActivityStats backend = backend_->stats();
  out->dropped = backend.dropped;
  out->buffers_exhausted = backend.buffers_exhausted;
  out->filtered = backend.filtered;
  out->starts_before_launch = launches_.starts_before_launch();
  if (attribution_) {
    out->attributed = attribution_->attributed();
    out->unattributed = attribution_->unattributed();
  }
  out->untimed = kernel_notes_.untimed() + backend.untimed;
  if (bursts_.sampled()) {
    out->sampled = true;
    out->bursts = bursts_seen_;
    out->recorded_ns =
        static_cast<std::int64_t>(static_cast<double>(recorded_ticks_) * ns_per_tick_);
  }
}

}  // namespace gpuprobe::gpu
