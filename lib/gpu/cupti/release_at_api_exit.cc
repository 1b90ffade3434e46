#include "gpu/cupti/release_at_api_exit.h"

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

namespace gpuprobe::cupti::release_at_api_exit {

std::atomic<int> detail::g_state{detail::kIdle};
using detail::g_state;
using detail::kIdle;
using detail::kReleased;
using detail::kReleasing;
using detail::kRequested;

namespace {

// Written only while idle, before the request is published (release), read by the releasing
// call after it claimed the request (acquire).
const CuptiApi* g_api = nullptr;
std::array<CUpti_ActivityKind, 16> g_kinds{};
std::size_t g_kind_count = 0;
std::size_t g_dropped = 0;  // written by the release, read after it (kReleased)

}  // namespace

Status request(const CuptiApi& api, CUpti_SubscriberHandle subscriber,
               const std::vector<CUpti_ActivityKind>& kinds) {
  if (g_state.load(std::memory_order_acquire) != kIdle) {
    return Status::Error("a release of CUPTI is already pending");
  }
  if (api.enable_domain == nullptr || kinds.size() > g_kinds.size()) {
    return Status::Error("cuptiEnableDomain is not in this CUPTI");
  }
  g_api = &api;
  g_kind_count = kinds.size();
  for (std::size_t i = 0; i < kinds.size(); ++i) g_kinds[i] = kinds[i];
  g_state.store(kRequested, std::memory_order_release);
  const bool runtime =
      api.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS;
  const bool driver = api.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
  if (runtime && driver) return {};
  // Without the callbacks no call would come to release CUPTI.
  if (withdraw(api, subscriber)) return Status::Error("cuptiEnableDomain failed");
  return {};  // a call released it meanwhile
}

bool detail::release() {
  int expected = kRequested;
  if (!g_state.compare_exchange_strong(expected, kReleasing, std::memory_order_acquire)) {
    return false;
  }
  const CuptiApi& api = *g_api;
  for (std::size_t i = 0; i < g_kind_count; ++i) api.activity_disable(g_kinds[i]);
  // The buffers come back to the session's pool now; the collector takes them from there.
  api.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_dropped = 0;
  api.activity_get_num_dropped_records(nullptr, 0, &g_dropped);
  api.finalize();
  g_state.store(kReleased, std::memory_order_release);
  return true;
}

bool take_released() {
  int expected = kReleased;
  return g_state.compare_exchange_strong(expected, kIdle, std::memory_order_acq_rel);
}

std::size_t dropped() { return g_dropped; }

bool withdraw(const CuptiApi& api, CUpti_SubscriberHandle subscriber) {
  int expected = kRequested;
  if (g_state.compare_exchange_strong(expected, kIdle, std::memory_order_acq_rel)) {
    api.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    api.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    return true;
  }
  // A call is releasing CUPTI: it takes as long as a forced flush.
  while (g_state.load(std::memory_order_acquire) == kReleasing) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return false;
}

}  // namespace gpuprobe::cupti::release_at_api_exit
