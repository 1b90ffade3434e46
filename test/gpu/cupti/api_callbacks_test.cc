// The kept API calls from CUPTI callbacks: which callbacks are enabled, what a call's exit writes
// into the calling thread's ring, and the API record it becomes. CUPTI is replaced by functions
// that name a few callback ids and note what is enabled.
#include "gpu/cupti/api_callbacks.h"

#include <string>
#include <utility>
#include <vector>

#include "core/name_table.h"
#include "gpuprobe/gpuprobe.hpp"
#include "gpuprobe/session.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe::cupti {
namespace {

constexpr CUpti_CallbackId kGetDevice = 1, kLaunch = 2, kCopy = 3, kDriverLaunch = 5;

CUptiResult fake_name(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == kDriverLaunch) {
    *name = "cuLaunchKernel";
    return CUPTI_SUCCESS;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (cbid) {
    case kGetDevice:
      *name = "cudaGetDevice_v3020";
      return CUPTI_SUCCESS;
    case kLaunch:
      *name = "cudaLaunchKernel_v7000";
      return CUPTI_SUCCESS;
    case kCopy:
      *name = "cudaMemcpyAsync_v3020";
      return CUPTI_SUCCESS;
    default:
      return CUPTI_ERROR_INVALID_PARAMETER;
  }
}

std::vector<std::pair<uint32_t, CUpti_CallbackId>> g_enables;  // (enable, cbid) in call order
CUpti_CallbackId g_fail_at = 0;                                // enabling this id fails

CUptiResult fake_enable(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                        CUpti_CallbackId cbid) {
  if (enable != 0 && cbid == g_fail_at) return CUPTI_ERROR_INVALID_PARAMETER;
  g_enables.emplace_back(enable, cbid);
  return CUPTI_SUCCESS;
}

CuptiApi fake_api() {
  CuptiApi api{};
  api.get_callback_name = &fake_name;
  api.enable_callback = &fake_enable;
  return api;
}

// What CUPTI passes for one call of `cbid`, entry then exit, with the word it keeps between;
// `inside` runs between the two, as calls the function itself makes.
template <typename Inside>
void call(CUpti_CallbackId cbid, std::uint32_t correlation, Inside inside,
          CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_RUNTIME_API) {
  std::uint64_t kept = 0;
  CUpti_CallbackData data{};
  data.correlationData = &kept;
  data.correlationId = correlation;
  data.callbackSite = CUPTI_API_ENTER;
  ApiCallbacks::on_call(nullptr, domain, cbid, &data);
  inside();
  data.callbackSite = CUPTI_API_EXIT;
  ApiCallbacks::on_call(nullptr, domain, cbid, &data);
}

void call(CUpti_CallbackId cbid, std::uint32_t correlation,
          CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_RUNTIME_API) {
  call(
      cbid, correlation, [] {}, domain);
}

TEST_CASE("only the kept calls get a callback, and each becomes CUPTI's API record") {
  g_enables.clear();
  g_fail_at = 0;
  const CuptiApi api = fake_api();
  ActivityDecoder names(&fake_name);
  ApiCallbacks callbacks;
  REQUIRE(callbacks.enable(api, nullptr, /*runtime=*/true, &names).ok());
  using Enables = std::vector<std::pair<uint32_t, CUpti_CallbackId>>;
  REQUIRE(g_enables == Enables{{1, kLaunch}, {1, kCopy}});

  const CallSite* launch = core::NameTable::get().intern("cudaLaunchKernel", Category::kCuda);
  GpuActivity a;
  REQUIRE(callbacks.to_activity(7, 42, 100, 150, launch, 9, &a));
  CHECK(a.kind == GpuActivityKind::kRuntimeApi);
  CHECK(std::string(a.name) == "cudaLaunchKernel");
  CHECK(a.cbid == kLaunch);
  CHECK(a.correlation == 9);
  CHECK(a.start == 100);
  CHECK(a.end == 150);
  CHECK(a.os_tid == 7);
  CHECK(a.thread_id == 42);
  CHECK(a.process_id != 0);
  // A site this session did not name is not an API call of its.
  const CallSite* other = core::NameTable::get().intern("cudaGetDevice", Category::kCuda);
  CHECK_FALSE(callbacks.to_activity(7, 42, 100, 150, other, 9, &a));

  g_enables.clear();
  callbacks.disable(api, nullptr);
  CHECK(g_enables == Enables{{0, kLaunch}, {0, kCopy}});
}

TEST_CASE("when a callback cannot be enabled, the ones before it are switched off again") {
  g_enables.clear();
  g_fail_at = kCopy;
  const CuptiApi api = fake_api();
  ActivityDecoder names(&fake_name);
  ApiCallbacks callbacks;
  const Status s = callbacks.enable(api, nullptr, true, &names);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("cudaMemcpyAsync") != std::string::npos);
  using Enables = std::vector<std::pair<uint32_t, CUpti_CallbackId>>;
  CHECK(g_enables == Enables{{1, kLaunch}, {0, kLaunch}});
  g_fail_at = 0;
}

TEST_CASE("a call's exit writes into the thread's ring, and no sink sees it as an event") {
  g_enables.clear();
  const CuptiApi api = fake_api();
  ActivityDecoder names(&fake_name);
  ApiCallbacks callbacks;
  REQUIRE(callbacks.enable(api, nullptr, true, &names).ok());
  call(kLaunch, 1);  // outside a session: nothing is written, nothing breaks
  auto sink = std::make_shared<testing::CaptureSink>();
  {
    // One drain, at stop: the ring's fill level then shows every record written into it.
    Session session("ring=1024,flush_ms=10000", {sink});
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("before"); }
    for (std::uint32_t i = 0; i < 3; ++i) call(kLaunch, 10 + i);
    call(kGetDevice, 20);  // no site: not a kept call
    { GPUPROBE_RANGE("after"); }
    REQUIRE(session.stop().ok());
    // The calls went to the session's GPU source (here one without CUPTI, which has no use
    // for them): the thread's row counts only its own events, and none was lost.
    const Stats stats = session.stats();
    REQUIRE(stats.threads.size() == 1);
    CHECK(stats.threads[0].written == 2);
    CHECK(stats.threads[0].peak_fill == 5);  // the two ranges and the three launches
    CHECK(stats.dropped == 0);
  }
  std::vector<std::string> seen;
  for (const auto& e : sink->events()) seen.push_back(e.name);
  CHECK(seen == std::vector<std::string>{"before", "after"});
  callbacks.disable(api, nullptr);
}

TEST_CASE("a driver call the runtime makes inside a kept call is not recorded again") {
  g_enables.clear();
  const CuptiApi api = fake_api();
  ActivityDecoder names(&fake_name);
  ApiCallbacks callbacks;
  REQUIRE(callbacks.enable(api, nullptr, true, &names).ok());
  REQUIRE(callbacks.enable(api, nullptr, false, &names).ok());
  auto sink = std::make_shared<testing::CaptureSink>();
  Session session("ring=1024,flush_ms=10000", {sink});
  REQUIRE(session.ok());
  // cudaLaunchKernel launching through cuLaunchKernel: one record, the runtime's.
  call(kLaunch, 1, [] { call(kDriverLaunch, 2, CUPTI_CB_DOMAIN_DRIVER_API); });
  call(kDriverLaunch, 3, CUPTI_CB_DOMAIN_DRIVER_API);  // Triton launching directly: recorded
  REQUIRE(session.stop().ok());
  const Stats stats = session.stats();
  REQUIRE(stats.threads.size() == 1);
  CHECK(stats.threads[0].peak_fill == 2);
  callbacks.disable(api, nullptr);
}

}  // namespace
}  // namespace gpuprobe::cupti
