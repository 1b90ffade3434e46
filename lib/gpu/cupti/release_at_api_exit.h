// CUPTI let go of (its activity kinds disabled, its buffers flushed, cuptiFinalize) at the exit
// of a CUDA call, on the thread that made the call — where NVIDIA's CUPTI documentation says to
// detach ("dynamic detach": call cuptiFinalize in the exit callsite of a CUDA API). Why not from
// the collector: finalizing CUPTI from one thread while another calls CUDA races with those
// calls; on the H200 a program that went on using CUPTI after such a release aborted with a
// corrupted heap. One per process, as CUPTI is.
//
// The collector asks (request), CUDA calls' exit callbacks do it in two steps (at_api_exit, from
// ApiCallbacks::on_call), and the collector sees it done (take_released) or takes the request
// back before any call took it up (withdraw). Between the request and the release the collector
// makes no CUPTI call: a flush from it could race with the release too.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/cupti/cupti_library.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::cupti::release_at_api_exit {

// Asks for the release: every runtime and driver API callback of `subscriber` is turned on, so
// that the next CUDA call on any thread comes through on_call. That call's exit disables `kinds`;
// the first call's exit at least `drain_ns` later flushes every buffer (forced) and finalizes
// CUPTI. Why in two steps: a forced flush hands back the work still in flight untimed, which is
// lost (on the H200, tens of kernels a burst when four threads launched); the drain lets what was
// launched before the burst's end finish and be timed. CUPTI records as before until the first.
[[nodiscard]] Status request(const CuptiApi& api, CUpti_SubscriberHandle subscriber,
                             const std::vector<CUpti_ActivityKind>& kinds, std::int64_t drain_ns);

namespace detail {
// Never use these directly. The request's state, read inline by every API callback's exit: a
// relaxed load when nothing is asked, the release itself out of line.
enum State : int { kIdle, kRequested, kDraining, kBusy, kReleased };
extern std::atomic<int> g_state;
bool step();
}  // namespace detail

// From the subscriber's callback at a CUDA call's exit: takes the release's next step if one is
// due. True when CUPTI was finalized (it is gone: the callback must do nothing more).
inline bool at_api_exit() {
  const int state = detail::g_state.load(std::memory_order_relaxed);
  return (state == detail::kRequested || state == detail::kDraining) && detail::step();
}

// True once when the requested release has happened (then nothing is pending).
bool take_released();

// The records CUPTI said it dropped, read by the last release just before it finalized.
std::size_t dropped();

enum class Withdrawal {
  kWithdrawn,  // no call took the request up: the domain callbacks off again, CUPTI as it was
  kDraining,   // a call disabled the kinds: the release goes on (finish_now() ends it at once)
  kReleased,   // a call released CUPTI (then take_released() is true)
};
// Takes back a request, at a burst's start or the session's end. While a call takes a step,
// waits for it (as long as a forced flush).
Withdrawal withdraw(const CuptiApi& api, CUpti_SubscriberHandle subscriber);

// The session's end while the release drains: flushes and finalizes now, on the caller's thread,
// as a session's end always does. Afterwards take_released() is true.
void finish_now();

}  // namespace gpuprobe::cupti::release_at_api_exit
