// The CUPTI activity backend: enables the requested activity kinds with gpuprobe's clock,
// feeds CUPTI buffers from a fixed pool, and decodes completed buffers on the collector.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/activity_source.h"
#include "gpu/cupti/activity_buffers.h"
#include "gpu/cupti/activity_decoder.h"
#include "gpu/cupti/api_callbacks.h"
#include "gpu/cupti/cupti_library.h"

namespace gpuprobe::cupti {

class CuptiTracer : public gpu::ActivitySource {
 public:
  CuptiTracer(const CuptiLibrary& library, const gpu::ActivityOptions& options);
  ~CuptiTracer() override;

  // Registers callbacks and enables the kinds; on failure everything is undone.
  Status start();

  void add_api_call(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                    std::uint64_t end, const CallSite* site, std::uint32_t correlation) override;
  void collect(bool final, std::vector<GpuActivity>* out) override;
  Status set_recording(bool on) override;
  void disable() override;
  void finalize() override;
  gpu::ActivityStats stats() const override;
  const std::vector<DeviceInfo>& devices() const override { return library_.devices(); }

 private:
  Status check(CUptiResult result, const char* call) const;
  // Lets go of CUPTI as a session's end does: disabled, flushed (the records into `keep`, or
  // discarded), unsubscribed, finalized. start() takes it again.
  void detach(std::vector<GpuActivity>* keep);
  enum class Settled { kAttached, kDraining, kReleased };
  // Ends a pending release, at a burst's start or (`end_now`) the session's end: withdrawn when no
  // CUDA call took it up (still attached and recording); else released — by the calls, or here
  // when it drains and `end_now` — the records into `keep`; or, not `end_now`, left draining.
  Settled settle_release(std::vector<GpuActivity>* keep, bool end_now);
  // After a CUDA call let go of CUPTI: forgets the subscriber, kinds and callbacks.
  void released(std::vector<GpuActivity>* keep);
  // The records CUPTI handed back into `keep` (or discarded), the pool no longer CUPTI's.
  void end_attachment(std::vector<GpuActivity>* keep);
  // Enables the activity kinds and API callbacks of the options; on failure some may be on.
  Status enable_kinds();
  // With the runtime (or driver) kind enabled: switches off, one callback id at a time, the calls
  // api_selection.h does not keep.
  Status narrow_api_kind(bool runtime);
  void parse(std::uint8_t* buffer, std::size_t valid, std::vector<GpuActivity>* out);

  const CuptiLibrary& library_;
  const gpu::ActivityOptions options_;
  ActivityBufferPool pool_;
  ActivityDecoder decoder_;
  std::vector<CUpti_ActivityKind> enabled_;
  ApiCallbacks callbacks_;
  std::vector<GpuActivity> calls_;  // API calls from the rings, out with the next collect()
  // Held for the whole session: CUPTI admits one subscriber, so holding it both detects another
  // profiler (torch.profiler, Nsight, compute-sanitizer) at start and keeps one from taking
  // CUPTI's callbacks from under gpuprobe while it records.
  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool finalized_ = false;
  bool attached_ = false;            // subscribed, the kinds and callbacks on (start())
  bool releasing_ = false;           // attached, a release at the next CUDA call asked for
  bool restart_ = false;             // releasing, and the next burst already due
  std::vector<GpuActivity> parked_;  // what CUPTI handed back at a detach, out with collect()
  std::uint64_t dropped_ = 0;
};

}  // namespace gpuprobe::cupti
