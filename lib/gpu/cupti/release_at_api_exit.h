// CUPTI let go of (its activity kinds disabled, its buffers flushed, cuptiFinalize) at the exit
// of a CUDA call, on the thread that made the call — where NVIDIA's CUPTI documentation says to
// detach ("dynamic detach": call cuptiFinalize in the exit callsite of a CUDA API). Why not from
// the collector: finalizing CUPTI from one thread while another calls CUDA races with those
// calls; on the H200 a program that went on using CUPTI after such a release aborted with a
// corrupted heap. One per process, as CUPTI is.
//
// The collector asks (request), a CUDA call's exit callback does it (at_api_exit, from
// ApiCallbacks::on_call), and the collector sees it done (take_released) or takes the request
// back before any call took it up (withdraw). Between the request and the release the collector
// makes no CUPTI call: a flush from it could race with the release too.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <vector>

#include "gpu/cupti/cupti_library.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::cupti::release_at_api_exit {

// Asks for the release: every runtime and driver API callback of `subscriber` is turned on, so
// that the next CUDA call on any thread comes through on_call, whose exit disables `kinds`,
// flushes every buffer (forced) and finalizes CUPTI. CUPTI records as before until then.
[[nodiscard]] Status request(const CuptiApi& api, CUpti_SubscriberHandle subscriber,
                             const std::vector<CUpti_ActivityKind>& kinds);

namespace detail {
// Never use these directly. The request's state, read inline by every API callback's exit: a
// relaxed load when nothing is asked, the release itself out of line.
enum State : int { kIdle, kRequested, kReleasing, kReleased };
extern std::atomic<int> g_state;
bool release();
}  // namespace detail

// From the subscriber's callback at a CUDA call's exit: releases CUPTI if a request is waiting.
// True when it did (CUPTI is gone: the callback must do nothing more).
inline bool at_api_exit() {
  return detail::g_state.load(std::memory_order_relaxed) == detail::kRequested && detail::release();
}

// True once when the requested release has happened (then nothing is pending).
bool take_released();

// The records CUPTI said it dropped, read by the last release just before it finalized.
std::size_t dropped();

// Takes back a request no call took up: the domain callbacks off again, CUPTI recording as it
// was; true. When a release already runs or ran, waits for it to end and returns false (then
// take_released() is true).
bool withdraw(const CuptiApi& api, CUpti_SubscriberHandle subscriber);

}  // namespace gpuprobe::cupti::release_at_api_exit
