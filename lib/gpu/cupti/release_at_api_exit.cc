#include "gpu/cupti/release_at_api_exit.h"

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

namespace gpuprobe::cupti::release_at_api_exit {

std::atomic<int> detail::g_state{detail::kIdle};
using detail::g_state;
using detail::kBusy;
using detail::kDraining;
using detail::kIdle;
using detail::kReleased;
using detail::kRequested;

namespace {

// Written only while idle, before the request is published (release), read by the call that
// claimed it (acquire); g_drain_until likewise before kDraining is published.
const CuptiApi* g_api = nullptr;
std::array<CUpti_ActivityKind, 16> g_kinds{};
std::size_t g_kind_count = 0;
std::int64_t g_drain_ns = 0;
std::int64_t g_drain_until = 0;
std::size_t g_dropped = 0;  // written by the release, read after it (kReleased)

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The second step, with the state kBusy: what CUPTI holds comes back to the session's pool (the
// collector takes it from there), and CUPTI goes.
void flush_and_finalize() {
  const CuptiApi& api = *g_api;
  api.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_dropped = 0;
  api.activity_get_num_dropped_records(nullptr, 0, &g_dropped);
  api.finalize();
  g_state.store(kReleased, std::memory_order_release);
}

void wait_while_busy() {
  while (g_state.load(std::memory_order_acquire) == kBusy) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

Status request(const CuptiApi& api, CUpti_SubscriberHandle subscriber,
               const std::vector<CUpti_ActivityKind>& kinds, std::int64_t drain_ns) {
  if (g_state.load(std::memory_order_acquire) != kIdle) {
    return Status::Error("a release of CUPTI is already pending");
  }
  if (api.enable_domain == nullptr || kinds.size() > g_kinds.size()) {
    return Status::Error("cuptiEnableDomain is not in this CUPTI");
  }
  g_api = &api;
  g_kind_count = kinds.size();
  for (std::size_t i = 0; i < kinds.size(); ++i) g_kinds[i] = kinds[i];
  g_drain_ns = drain_ns;
  g_state.store(kRequested, std::memory_order_release);
  const bool runtime =
      api.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS;
  const bool driver = api.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
  if (runtime && driver) return {};
  // Without the callbacks no call would come to release CUPTI.
  if (withdraw(api, subscriber) == Withdrawal::kWithdrawn) {
    return Status::Error("cuptiEnableDomain failed");
  }
  return {};  // a call took the request up meanwhile
}

bool detail::step() {
  int expected = kRequested;
  if (g_state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) {
    for (std::size_t i = 0; i < g_kind_count; ++i) g_api->activity_disable(g_kinds[i]);
    if (g_drain_ns > 0) {
      g_drain_until = steady_ns() + g_drain_ns;
      g_state.store(kDraining, std::memory_order_release);
      return false;
    }
    flush_and_finalize();
    return true;
  }
  // A failed exchange loads with acquire: g_drain_until is the one published with kDraining.
  if (expected != kDraining || steady_ns() < g_drain_until) return false;
  if (!g_state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) return false;
  flush_and_finalize();
  return true;
}

bool take_released() {
  int expected = kReleased;
  return g_state.compare_exchange_strong(expected, kIdle, std::memory_order_acq_rel);
}

std::size_t dropped() { return g_dropped; }

Withdrawal withdraw(const CuptiApi& api, CUpti_SubscriberHandle subscriber) {
  int expected = kRequested;
  if (g_state.compare_exchange_strong(expected, kIdle, std::memory_order_acq_rel)) {
    api.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    api.enable_domain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    return Withdrawal::kWithdrawn;
  }
  wait_while_busy();
  return g_state.load(std::memory_order_acquire) == kDraining ? Withdrawal::kDraining
                                                              : Withdrawal::kReleased;
}

void finish_now() {
  int expected = kDraining;
  if (g_state.compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) {
    flush_and_finalize();
    return;
  }
  wait_while_busy();  // a call is finishing it
}

}  // namespace gpuprobe::cupti::release_at_api_exit
