#include "gpu/cupti/api_callbacks.h"

#include <unistd.h>

#include <atomic>

#include "core/name_table.h"
#include "gpu/cupti/api_selection.h"
#include "gpu/cupti/release_at_api_exit.h"
#include "gpuprobe/detail/gate.hpp"

namespace gpuprobe::cupti {
namespace {

// The site of each enabled callback id, read by on_call on the calling thread. Static, so that a
// callback still running while a session stops never reads freed memory: the sites themselves
// outlive their session by one more (core/name_table.h), and a record of a stopped session is
// refused by its ring (the gate's epoch) or discarded by the collector.
std::atomic<const CallSite*> g_runtime_sites[CUPTI_RUNTIME_TRACE_CBID_SIZE];
std::atomic<const CallSite*> g_driver_sites[CUPTI_DRIVER_TRACE_CBID_SIZE];

std::atomic<const CallSite*>* site_slot(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
    return &g_runtime_sites[cbid];
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
    return &g_driver_sites[cbid];
  return nullptr;
}

// Kept runtime calls this thread is inside, in the session of t_depth_epoch: a driver call made
// within one is the runtime's own doing (cudaLaunchKernel calling the driver's launch), which
// CUPTI's API activity records leave out too, and it does not carry the launch's correlation id.
__thread std::uint32_t t_runtime_depth = 0;
__thread std::uint32_t t_depth_epoch = 0;

}  // namespace

void CUPTIAPI ApiCallbacks::on_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                    const void* data) {
  const std::uint64_t gate = detail::g_gate.load(std::memory_order_relaxed);
  std::atomic<const CallSite*>* slot = site_slot(domain, cbid);
  if (slot == nullptr || data == nullptr) return;
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  const bool enter = call->callbackSite == CUPTI_API_ENTER;
  // Where CUPTI is let go of between bursts (release_at_api_exit.h): then CUPTI is gone.
  if (!enter && release_at_api_exit::at_api_exit()) return;
  if (gate == 0) return;
  if (t_depth_epoch != detail::epoch_of(gate)) {
    // A call that began in an earlier session may never have been seen to end.
    t_depth_epoch = detail::epoch_of(gate);
    t_runtime_depth = 0;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (enter) {
      ++t_runtime_depth;
    } else if (t_runtime_depth > 0) {
      --t_runtime_depth;
    }
  } else if (t_runtime_depth > 0) {
    return;
  }
  if (enter) {
    // CUPTI keeps this word from a call's entry to its exit.
    *call->correlationData = detail::now_ticks(gate);
    return;
  }
  const CallSite* site = slot->load(std::memory_order_relaxed);
  if (site == nullptr) return;
  // A call whose entry came before its callback was switched on (gpu_burst=) has no start.
  const std::uint64_t begin = *call->correlationData;
  const std::uint64_t end = detail::now_ticks(gate);
  if (begin == 0 || begin > end) return;
  detail::emit(gate, detail::RecordKind::kGpuCall, site, begin, end, call->correlationId);
}

Status ApiCallbacks::enable(const CuptiApi& api, CUpti_SubscriberHandle subscriber, bool runtime,
                            ActivityDecoder* names) {
  if (api.enable_callback == nullptr || api.get_callback_name == nullptr) {
    return Status::Error("cuptiEnableCallback is not in this CUPTI");
  }
  pid_ = static_cast<std::uint32_t>(getpid());  // per session: a forked child starts its own
  const std::size_t first = enabled_.size();
  std::string failed;
  for_each_api(
      api.get_callback_name, runtime,
      [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, bool recorded) {
        if (!recorded) return true;
        const CallSite* site =
            core::NameTable::get().intern(names->api_name(domain, cbid), Category::kCuda);
        site_slot(domain, cbid)->store(site, std::memory_order_relaxed);
        calls_[site] = Call{domain, cbid};
        if (api.enable_callback(1, subscriber, domain, cbid) != CUPTI_SUCCESS) {
          failed = name;
          return false;
        }
        enabled_.push_back(Call{domain, cbid});
        return true;
      });
  if (failed.empty()) return {};
  for (std::size_t i = first; i < enabled_.size(); ++i) {
    api.enable_callback(0, subscriber, enabled_[i].domain, enabled_[i].cbid);
  }
  enabled_.resize(first);
  return Status::Error("cuptiEnableCallback(" + failed + ") failed");
}

void ApiCallbacks::reenable(const CuptiApi& api, CUpti_SubscriberHandle subscriber) const {
  for (const Call& c : enabled_) api.enable_callback(1, subscriber, c.domain, c.cbid);
}

void ApiCallbacks::forget() { enabled_.clear(); }

void ApiCallbacks::disable(const CuptiApi& api, CUpti_SubscriberHandle subscriber) {
  for (const Call& c : enabled_) api.enable_callback(0, subscriber, c.domain, c.cbid);
  enabled_.clear();
}

bool ApiCallbacks::to_activity(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                               std::uint64_t end, const CallSite* site, std::uint32_t correlation,
                               GpuActivity* out) const {
  const auto it = calls_.find(site);
  if (it == calls_.end()) return false;
  *out = GpuActivity{};
  out->kind = it->second.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? GpuActivityKind::kRuntimeApi
                                                               : GpuActivityKind::kDriverApi;
  out->start = begin;
  out->end = end;
  out->name = site->name;
  out->correlation = correlation;
  out->cbid = it->second.cbid;
  out->thread_id = pthread_id;
  out->os_tid = os_tid;
  out->process_id = pid_;
  return true;
}

}  // namespace gpuprobe::cupti
