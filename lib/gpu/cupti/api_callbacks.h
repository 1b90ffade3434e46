// The API calls a session keeps (api_selection.h), recorded from CUPTI callbacks instead of as
// CUPTI API activity records: CUPTI calls back only for those callback ids, and each call's
// exit writes one record — its function, start, end and correlation id — into the calling
// thread's own gpuprobe ring (RecordKind::kGpuCall). The collector drains it with the thread's
// other events and hands it back here (to_activity) to become the same API record CUPTI would
// have written. Why: with the runtime or driver activity kind enabled, CUPTI records into its
// buffers for every call it traces; the callbacks cost one clock read at entry and a ring write
// at exit, on calls that are already being made slower by CUPTI's launch tracing.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/cupti/activity_decoder.h"
#include "gpu/cupti/cupti_library.h"
#include "gpuprobe/call_site.hpp"
#include "gpuprobe/gpu_activity.hpp"
#include "gpuprobe/status.hpp"

namespace gpuprobe::cupti {

class ApiCallbacks {
 public:
  // The subscriber's callback: pass it to cuptiSubscribe. Does nothing for callback ids no
  // session enabled, or outside a session.
  static void CUPTIAPI on_call(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* data);

  // Enables the callbacks of every kept call of the runtime (or driver) domain, naming each
  // through `names`. On failure nothing of that domain stays enabled.
  [[nodiscard]] Status enable(const CuptiApi& api, CUpti_SubscriberHandle subscriber, bool runtime,
                              ActivityDecoder* names);
  // Switches every callback enable() turned on off again.
  void disable(const CuptiApi& api, CUpti_SubscriberHandle subscriber);
  // Turns them on again after a whole domain was switched off (release_at_api_exit::withdraw).
  void reenable(const CuptiApi& api, CUpti_SubscriberHandle subscriber) const;
  // Forgets them without a CUPTI call: CUPTI was finalized, and its subscriber with it.
  void forget();

  // The API record for a call drained from a ring; false for a site this session did not name.
  bool to_activity(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                   std::uint64_t end, const CallSite* site, std::uint32_t correlation,
                   GpuActivity* out) const;

 private:
  struct Call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
  };
  std::vector<Call> enabled_;
  std::uint32_t pid_ = 0;  // the process the calls are made in, read at enable()
  std::unordered_map<const CallSite*, Call> calls_;  // the sites this session named
};

}  // namespace gpuprobe::cupti
