// The CUPTI backend's calls, in order, against functions that stand in for CUPTI: a session's
// start and end, and GPU bursts (gpu_burst=) — CUPTI let go of between bursts at the program's
// next CUDA call, on its thread, the buffers it held handed back first, and taken again exactly
// as at a start; the kinds disabled first and CUPTI finalized only after the work in flight had
// time to finish; a release no call took up is taken back; another profiler that took CUPTI in
// between is told apart and never finalized.
#include "gpu/cupti/cupti_tracer.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/gpu_source.h"
#include "support/catch.hpp"

namespace gpuprobe::cupti {
namespace {

std::vector<std::string> g_calls;
bool g_refuse_subscribe = false;
CUpti_BuffersCallbackRequestFunc g_request = nullptr;
CUpti_BuffersCallbackCompleteFunc g_complete = nullptr;
std::vector<uint8_t*> g_held;  // buffers "CUPTI" took and has not handed back

CUptiResult fake_subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc, void*) {
  g_calls.push_back("subscribe");
  if (g_refuse_subscribe) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
  return CUPTI_SUCCESS;
}
CUptiResult fake_unsubscribe(CUpti_SubscriberHandle) {
  g_calls.push_back("unsubscribe");
  return CUPTI_SUCCESS;
}
CUptiResult fake_timestamp(CUpti_TimestampCallbackFunc) {
  g_calls.push_back("timestamp");
  return CUPTI_SUCCESS;
}
CUptiResult fake_register(CUpti_BuffersCallbackRequestFunc request,
                          CUpti_BuffersCallbackCompleteFunc complete) {
  g_calls.push_back("buffers");
  g_request = request;
  g_complete = complete;
  return CUPTI_SUCCESS;
}
CUptiResult fake_enable(CUpti_ActivityKind kind) {
  g_calls.push_back("enable " + std::to_string(static_cast<int>(kind)));
  return CUPTI_SUCCESS;
}
CUptiResult fake_disable(CUpti_ActivityKind kind) {
  g_calls.push_back("disable " + std::to_string(static_cast<int>(kind)));
  return CUPTI_SUCCESS;
}
CUptiResult fake_flush(uint32_t flag) {
  const bool forced = flag == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
  g_calls.push_back(forced ? "flush forced" : "flush");
  if (forced) {
    for (uint8_t* b : g_held) g_complete(nullptr, 0, b, 0, 0);
    g_held.clear();
  }
  return CUPTI_SUCCESS;
}
CUptiResult fake_next(uint8_t*, size_t, CUpti_Activity**) { return CUPTI_ERROR_MAX_LIMIT_REACHED; }
CUptiResult fake_dropped(CUcontext, uint32_t, size_t* n) {
  *n = 0;
  return CUPTI_SUCCESS;
}
CUptiResult fake_finalize() {
  g_calls.push_back("finalize");
  return CUPTI_SUCCESS;
}

CUptiResult fake_enable_domain(uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) {
  g_calls.push_back(std::string(on ? "domain on " : "domain off ") +
                    (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver"));
  return CUPTI_SUCCESS;
}

CuptiApi fake_api() {
  CuptiApi api{};
  api.subscribe = &fake_subscribe;
  api.unsubscribe = &fake_unsubscribe;
  api.activity_register_timestamp_callback = &fake_timestamp;
  api.activity_register_callbacks = &fake_register;
  api.activity_enable = &fake_enable;
  api.activity_disable = &fake_disable;
  api.activity_flush_all = &fake_flush;
  api.activity_get_next_record = &fake_next;
  api.activity_get_num_dropped_records = &fake_dropped;
  api.finalize = &fake_finalize;
  api.enable_domain = &fake_enable_domain;
  return api;
}

// The program's thread returns from a CUDA call: CUPTI calls the subscriber back.
void api_exit() {
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_EXIT;
  ApiCallbacks::on_call(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &data);
}

// CUPTI asks for a buffer, as it does when a kernel's record needs one.
void take_buffer() {
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_request(&buffer, &size, &max_records);
  REQUIRE(buffer != nullptr);
  g_held.push_back(buffer);
}

gpu::ActivityOptions kernels_only() {
  gpu::ActivityOptions o;
  o.kinds = core::gpu_kind_bit(GpuActivityKind::kKernel);
  o.buffer_count = 2;
  o.buffer_bytes = 4096;
  o.max_bytes = 4 * 4096;
  o.burst_drain_ns = 0;  // the release in one step; the drain has its own test
  return o;
}

const std::string kKernelKind =
    std::to_string(static_cast<int>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
const std::vector<std::string> kStart = {"subscribe", "timestamp", "buffers",
                                         "enable " + kKernelKind};
const std::vector<std::string> kEnd = {"disable " + kKernelKind, "flush forced", "unsubscribe",
                                       "finalize"};
const std::vector<std::string> kAskRelease = {"domain on runtime", "domain on driver"};
const std::vector<std::string> kWithdraw = {"domain off runtime", "domain off driver"};
const std::vector<std::string> kRelease = {"disable " + kKernelKind, "flush forced", "finalize"};

TEST_CASE(
    "Between bursts CUPTI is let go of at the next CUDA call, and taken again as at a start") {
  g_calls.clear();
  g_refuse_subscribe = false;
  const CuptiLibrary library(fake_api());
  CuptiTracer tracer(library, kernels_only());
  REQUIRE(tracer.start().ok());
  CHECK(g_calls == kStart);
  take_buffer();

  g_calls.clear();
  REQUIRE(tracer.set_recording(false).ok());
  CHECK(g_calls == kAskRelease);  // every API callback on: the next call comes through
  g_calls.clear();
  std::vector<GpuActivity> out;
  tracer.collect(false, &out);  // until that call, no CUPTI call from the collector
  CHECK(g_calls.empty());
  api_exit();
  CHECK(g_calls == kRelease);
  CHECK(g_held.empty());  // handed back before CUPTI was finalized
  g_calls.clear();
  api_exit();  // released once
  tracer.collect(false, &out);
  REQUIRE(tracer.set_recording(false).ok());  // already off: nothing
  tracer.collect(false, &out);                // detached: no flush either
  CHECK(g_calls.empty());

  REQUIRE(tracer.set_recording(true).ok());
  CHECK(g_calls == kStart);
  take_buffer();
  g_calls.clear();
  tracer.collect(false, &out);
  CHECK(g_calls == std::vector<std::string>{"flush"});

  // The session's end while a burst records: the usual end, once.
  g_calls.clear();
  tracer.disable();
  tracer.finalize();
  std::vector<std::string> end = {"disable " + kKernelKind};
  end.insert(end.end(), kEnd.begin() + 1, kEnd.end());
  CHECK(g_calls == end);
  CHECK(g_held.empty());
  g_calls.clear();
  tracer.finalize();
  CHECK(g_calls.empty());
}

TEST_CASE("The release drains: the kinds off at one call, CUPTI finalized at a call 1 ms later") {
  g_calls.clear();
  g_refuse_subscribe = false;
  const CuptiLibrary library(fake_api());
  gpu::ActivityOptions options = kernels_only();
  options.burst_drain_ns = 1'000'000;
  CuptiTracer tracer(library, options);
  REQUIRE(tracer.start().ok());
  take_buffer();
  REQUIRE(tracer.set_recording(false).ok());
  g_calls.clear();
  api_exit();
  CHECK(g_calls == std::vector<std::string>{"disable " + kKernelKind});
  api_exit();  // within the drain: nothing
  CHECK(g_calls.size() == 1);
  CHECK(g_held.size() == 1);  // CUPTI still has the buffer the work in flight is written into
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  g_calls.clear();
  api_exit();
  CHECK(g_calls == std::vector<std::string>{"flush forced", "finalize"});
  CHECK(g_held.empty());

  // The next burst falls due while a release drains: it starts once the release is done.
  std::vector<GpuActivity> out;
  tracer.collect(false, &out);
  REQUIRE(tracer.set_recording(true).ok());
  take_buffer();
  REQUIRE(tracer.set_recording(false).ok());
  api_exit();  // the kinds off
  g_calls.clear();
  REQUIRE(tracer.set_recording(true).ok());  // cannot be taken back: no CUPTI call now
  CHECK(g_calls.empty());
  tracer.collect(false, &out);  // still draining: nothing either
  CHECK(g_calls.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  api_exit();
  tracer.collect(false, &out);  // released, and taken again as at a start
  std::vector<std::string> expected = {"flush forced", "finalize"};
  expected.insert(expected.end(), kStart.begin(), kStart.end());
  CHECK(g_calls == expected);

  // The session's end while a release drains: flushed and finalized then, once.
  take_buffer();
  REQUIRE(tracer.set_recording(false).ok());
  api_exit();
  g_calls.clear();
  tracer.disable();
  tracer.finalize();
  CHECK(g_calls == (std::vector<std::string>{"flush forced", "finalize"}));
  CHECK(g_held.empty());
}

// Started, then let go of CUPTI for the time between two bursts; the calls log cleared.
void start_and_detach(CuptiTracer* tracer) {
  g_refuse_subscribe = false;
  REQUIRE(tracer->start().ok());
  REQUIRE(tracer->set_recording(false).ok());
  api_exit();
  std::vector<GpuActivity> out;
  tracer->collect(false, &out);
  g_calls.clear();
}

TEST_CASE("A release no CUDA call took up is taken back: recording goes on under the same CUPTI") {
  const CuptiLibrary library(fake_api());
  CuptiTracer tracer(library, kernels_only());
  g_refuse_subscribe = false;
  REQUIRE(tracer.start().ok());
  REQUIRE(tracer.set_recording(false).ok());
  g_calls.clear();
  REQUIRE(tracer.set_recording(true).ok());  // the next burst, before any CUDA call
  CHECK(g_calls == kWithdraw);
  g_calls.clear();
  api_exit();  // nothing asked for any more
  CHECK(g_calls.empty());
  std::vector<GpuActivity> out;
  tracer.collect(false, &out);
  CHECK(g_calls == std::vector<std::string>{"flush"});

  // The session's end with a release asked for and not taken up: taken back, then the usual end.
  REQUIRE(tracer.set_recording(false).ok());
  g_calls.clear();
  tracer.disable();
  tracer.finalize();
  std::vector<std::string> end = kWithdraw;
  end.insert(end.end(), kEnd.begin(), kEnd.end());
  CHECK(g_calls == end);
}

TEST_CASE("A session that ends between bursts makes no CUPTI call at its end") {
  const CuptiLibrary library(fake_api());
  CuptiTracer tracer(library, kernels_only());
  start_and_detach(&tracer);
  tracer.disable();
  tracer.finalize();
  CHECK(g_calls.empty());
}

TEST_CASE("Another profiler that took CUPTI between bursts keeps it: never finalized by gpuprobe") {
  const CuptiLibrary library(fake_api());
  CuptiTracer tracer(library, kernels_only());
  start_and_detach(&tracer);
  g_refuse_subscribe = true;  // torch.profiler subscribed meanwhile
  const Status s = tracer.set_recording(true);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("another profiler") != std::string::npos);
  CHECK(std::find(g_calls.begin(), g_calls.end(), "finalize") == g_calls.end());
  CHECK_FALSE(tracer.set_recording(true).ok());  // gpuprobe's GPU recording is over
  g_calls.clear();
  tracer.disable();
  tracer.finalize();
  CHECK(g_calls.empty());
  g_refuse_subscribe = false;
}

}  // namespace
}  // namespace gpuprobe::cupti
