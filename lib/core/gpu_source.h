// Where GPU activity comes from, as the collector sees it: one seam, so that the collector has a
// single path for GPU records whatever produces them. lib/gpu/ implements it twice — CUPTI with
// the GPU pipeline behind it (launch matching, range attribution, kernel notes), and CUDA-event
// timing of gpuprobe::launch() for sessions without CUPTI.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/gpu_activity.hpp"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::core {

// Bit masks over GpuActivityKind, for the `cupti=` key.
constexpr std::uint32_t gpu_kind_bit(GpuActivityKind kind) {
  return 1u << static_cast<unsigned>(kind);
}
inline constexpr std::uint32_t kAllGpuKinds = 0x7Fu;

// With GPU activity recorded in bursts (`gpu_burst=`): recording switched on or off at `tick`.
struct RecordingSwitch {
  std::uint64_t tick;
  bool on;
};
// The site of the counter that writes them (kGpuRecordingCounter), for the collector and dumps.
inline constexpr CallSite kGpuRecordingSite{kGpuRecordingCounter, "", "", 0, 0, Category::kCuda};

class GpuSource {
 public:
  virtual ~GpuSource() = default;

  // What the collector sees of the recording threads, for sources that attribute GPU work to
  // ranges (wants_ranges()); the others ignore it. Times are ticks of the session's clock.
  virtual bool wants_ranges() const { return false; }
  // A thread's first drain: CUPTI names it by the low 32 bits of its pthread_self().
  virtual void add_thread(std::uint32_t /*pthread_id*/, std::int64_t /*os_tid*/) {}
  // Before the thread's ring is drained at `now`: whether it had no range open.
  virtual void thread_state(std::int64_t /*os_tid*/, bool /*idle*/, std::uint64_t /*now*/) {}
  // A range the collector drained from that thread's ring.
  virtual void add_range(std::int64_t /*os_tid*/, std::uint64_t /*begin*/, std::uint64_t /*end*/,
                         const CallSite* /*site*/) {}

  // A CUDA API call the source's own callbacks wrote into the calling thread's ring
  // (RecordKind::kGpuCall), drained from it on the collector.
  virtual void add_api_call(std::int64_t /*os_tid*/, std::uint32_t /*pthread_id*/,
                            std::uint64_t /*begin*/, std::uint64_t /*end*/,
                            const CallSite* /*site*/, std::uint32_t /*correlation*/) {}

  // Appends the records ready to be written at `now`; `final` (the session's last drain) gives
  // up waiting for anything and forces out what the backend still holds.
  virtual void collect(std::uint64_t now, bool final, std::vector<GpuActivity>* out) = 0;
  // With bursts: record until `tick` at least (the end of a dump's window). Any thread.
  virtual void record_until(std::uint64_t /*tick*/) {}
  // With bursts: moves the switches made since the previous call into `out`, in time order; the
  // collector writes them as the counter kGpuRecordingCounter (gpu_activity.hpp).
  virtual void take_switches(std::vector<RecordingSwitch>* /*out*/) {}

  // Stops producing records (before the collector's last drain).
  virtual void disable() {}
  // Releases the backend after the last drain, so that CUDA calls cost what they did before.
  virtual void finalize() {}
  // Fills the source's part of the GPU figures (everything but `status` and `records`).
  virtual void fill_stats(GpuStats* out) const = 0;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
};

}  // namespace gpuprobe::core
