#include "gpu/gpu_pipeline.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_event_timing.h"
#include "support/catch.hpp"

namespace gpuprobe::gpu {
namespace {

constexpr CallSite kRange{"step", "", "", 0, 0, Category::kApp};

// A backend that hands out what the test queued, and counts the calls the session makes.
class FakeBackend : public ActivitySource {
 public:
  std::vector<GpuActivity> queued;
  ActivityStats figures;
  int disabled = 0, finalized = 0;
  bool last_final = false;

  void collect(bool final, std::vector<GpuActivity>* out) override {
    last_final = final;
    out->insert(out->end(), queued.begin(), queued.end());
    queued.clear();
  }
  // As the CUPTI backend does with a call its callbacks wrote into a thread's ring.
  void add_api_call(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                    std::uint64_t end, const CallSite* site, std::uint32_t correlation) override {
    GpuActivity a;
    a.kind = GpuActivityKind::kRuntimeApi;
    a.name = site->name;
    a.os_tid = os_tid;
    a.thread_id = pthread_id;
    a.start = begin;
    a.end = end;
    a.correlation = correlation;
    queued.push_back(a);
  }
  std::vector<bool> switched;  // every set_recording() call
  bool refuse_switch = false;
  Status set_recording(bool on) override {
    if (refuse_switch) return Status::Error("refused");
    switched.push_back(on);
    return {};
  }
  void disable() override { ++disabled; }
  void finalize() override { ++finalized; }
  ActivityStats stats() const override { return figures; }
  const std::vector<DeviceInfo>& devices() const override { return devices_; }

 private:
  std::vector<DeviceInfo> devices_{DeviceInfo{}};
};

GpuActivity activity(GpuActivityKind kind, std::uint32_t correlation, std::uint64_t start) {
  GpuActivity a;
  a.kind = kind;
  a.name = kind == GpuActivityKind::kKernel ? "k" : "cudaLaunchKernel";
  a.correlation = correlation;
  a.thread_id = 42;
  a.start = start;
  a.end = start + 5;
  return a;
}

TEST_CASE("The pipeline attributes CUPTI's records to the range around their launch") {
  auto owned = std::make_unique<FakeBackend>();
  FakeBackend* backend = owned.get();
  const TimeBase time(0, 0, 1.0);
  GpuPipeline pipeline(std::move(owned), time, true, std::chrono::milliseconds(1000));
  REQUIRE(pipeline.wants_ranges());
  pipeline.add_thread(42, 7);  // CUPTI's thread 42 is the thread gettid() calls 7
  backend->queued = {activity(GpuActivityKind::kRuntimeApi, 1, 100),
                     activity(GpuActivityKind::kKernel, 1, 90)};  // starts before its launch
  std::vector<GpuActivity> out;
  pipeline.collect(200, false, &out);
  REQUIRE(out.empty());  // the range around the launch has not closed yet
  pipeline.add_range(7, 50, 300, &kRange);
  pipeline.thread_state(7, true, 400);
  pipeline.collect(400, false, &out);
  REQUIRE(out.size() == 2);
  for (const GpuActivity& a : out) REQUIRE(a.range == &kRange);

  backend->figures = ActivityStats{3, 2, 9};
  GpuStats stats;
  pipeline.fill_stats(&stats);
  REQUIRE(stats.dropped == 3);
  REQUIRE(stats.buffers_exhausted == 2);
  REQUIRE(stats.filtered == 9);
  REQUIRE(stats.starts_before_launch == 1);
  REQUIRE(stats.attributed == 2);
  REQUIRE(stats.unattributed == 0);
  REQUIRE(pipeline.devices().size() == 1);

  pipeline.collect(500, true, &out);
  REQUIRE(backend->last_final);
  pipeline.disable();
  pipeline.finalize();
  REQUIRE(backend->disabled == 1);
  REQUIRE(backend->finalized == 1);
}

TEST_CASE("API calls drained from a thread's ring reach the backend and give its kernels a range") {
  auto owned = std::make_unique<FakeBackend>();
  FakeBackend* backend = owned.get();
  GpuPipeline pipeline(std::move(owned), TimeBase(0, 0, 1.0), true,
                       std::chrono::milliseconds(1000));
  constexpr CallSite kLaunch{"cudaLaunchKernel", "", "", 0, 0, Category::kCuda};
  // The ring names the thread by gettid(): no CUPTI thread id to map first.
  pipeline.add_api_call(7, 42, 100, 110, &kLaunch, 5);
  backend->queued.push_back(activity(GpuActivityKind::kKernel, 5, 120));
  pipeline.add_range(7, 50, 300, &kRange);
  pipeline.thread_state(7, true, 400);
  std::vector<GpuActivity> out;
  pipeline.collect(400, false, &out);
  REQUIRE(out.size() == 2);
  for (const GpuActivity& a : out) REQUIRE(a.range == &kRange);
  REQUIRE(std::string(out[0].name) == "cudaLaunchKernel");
}

TEST_CASE("Without attribution, records pass straight through and ranges are not asked for") {
  auto owned = std::make_unique<FakeBackend>();
  FakeBackend* backend = owned.get();
  GpuPipeline pipeline(std::move(owned), TimeBase(0, 0, 1.0), false,
                       std::chrono::milliseconds(1000));
  REQUIRE_FALSE(pipeline.wants_ranges());
  backend->queued = {activity(GpuActivityKind::kKernel, 0, 10)};
  std::vector<GpuActivity> out{activity(GpuActivityKind::kMemcpy, 0, 1)};  // appended after
  pipeline.collect(20, false, &out);
  REQUIRE(out.size() == 2);
  REQUIRE(out[1].kind == GpuActivityKind::kKernel);
  REQUIRE(out[1].range == nullptr);
  GpuStats stats;
  pipeline.fill_stats(&stats);
  REQUIRE(stats.attributed == 0);
  REQUIRE(stats.unattributed == 0);
}

TEST_CASE("With gpu_burst=, the backend records ON in every EVERY and says when") {
  auto owned = std::make_unique<FakeBackend>();
  FakeBackend* backend = owned.get();
  // 100 ticks on in every 1000, from tick 5000 (1 ns a tick).
  GpuPipeline pipeline(std::move(owned), TimeBase(0, 0, 1.0), false,
                       std::chrono::milliseconds(1000), BurstOptions{100, 1000, 5000});
  std::vector<GpuActivity> out;
  std::vector<core::RecordingSwitch> switches;
  pipeline.take_switches(&switches);
  REQUIRE(switches.size() == 1);  // on from the start
  REQUIRE(switches[0].tick == 5000);
  REQUIRE(switches[0].on);
  pipeline.collect(5050, false, &out);  // inside the first burst: nothing switched
  REQUIRE(backend->switched.empty());
  pipeline.collect(5120, false, &out);  // past it
  pipeline.collect(5900, false, &out);
  pipeline.collect(6010, false, &out);  // the second burst
  pipeline.collect(6030, false, &out);
  pipeline.collect(6200, false, &out);
  REQUIRE(backend->switched == std::vector<bool>{false, true, false});
  switches.clear();
  pipeline.take_switches(&switches);
  REQUIRE(switches.size() == 3);
  REQUIRE(switches[0].tick == 5120);
  REQUIRE_FALSE(switches[0].on);
  REQUIRE(switches[1].tick == 6010);
  REQUIRE(switches[1].on);
  REQUIRE(switches[2].tick == 6200);
  GpuStats stats;
  pipeline.fill_stats(&stats);
  REQUIRE(stats.sampled);
  REQUIRE(stats.bursts == 2);
  REQUIRE(stats.recorded_ns == 120 + 190);  // as the collector saw the switches

  // A dump's window keeps it recording past the burst, however long.
  pipeline.record_until(9500);
  pipeline.collect(6300, false, &out);
  pipeline.collect(8500, false, &out);  // not in a burst, but in the window
  REQUIRE(backend->switched.back());
  pipeline.collect(9600, false, &out);
  REQUIRE_FALSE(backend->switched.back());

  // The session's stop: no switch after the backend is disabled, and the burst ends there.
  pipeline.collect(10010, false, &out);
  REQUIRE(backend->switched.back());
  const std::size_t made = backend->switched.size();
  pipeline.disable();
  pipeline.collect(10020, false, &out);
  pipeline.collect(11010, true, &out);
  REQUIRE(backend->switched.size() == made);
  switches.clear();
  pipeline.take_switches(&switches);
  REQUIRE_FALSE(switches.back().on);
  REQUIRE(switches.back().tick == 10020);
}

TEST_CASE("A backend that cannot switch keeps recording, said once") {
  auto owned = std::make_unique<FakeBackend>();
  FakeBackend* backend = owned.get();
  backend->refuse_switch = true;
  GpuPipeline pipeline(std::move(owned), TimeBase(0, 0, 1.0), false,
                       std::chrono::milliseconds(1000), BurstOptions{100, 1000, 0});
  std::vector<GpuActivity> out;
  pipeline.collect(500, false, &out);
  pipeline.collect(700, false, &out);
  std::vector<core::RecordingSwitch> switches;
  pipeline.take_switches(&switches);
  REQUIRE(switches.size() == 1);  // the start's; never off
  REQUIRE(switches[0].on);
}

TEST_CASE("Without gpu_burst=, nothing is switched and the figures are not samples") {
  auto owned = std::make_unique<FakeBackend>();
  FakeBackend* backend = owned.get();
  GpuPipeline pipeline(std::move(owned), TimeBase(0, 0, 1.0), false,
                       std::chrono::milliseconds(1000));
  std::vector<GpuActivity> out;
  for (std::uint64_t t = 0; t < 10000; t += 700) pipeline.collect(t, false, &out);
  pipeline.record_until(20000);
  pipeline.collect(30000, true, &out);
  std::vector<core::RecordingSwitch> switches;
  pipeline.take_switches(&switches);
  REQUIRE(switches.empty());
  REQUIRE(backend->switched.empty());
  GpuStats stats;
  pipeline.fill_stats(&stats);
  REQUIRE_FALSE(stats.sampled);
}

TEST_CASE("CUDA-event timing is a GPU source with no devices and no ranges") {
  CudaEventTiming timing{TimeBase(0, 0, 1.0)};
  REQUIRE_FALSE(timing.wants_ranges());
  REQUIRE(timing.devices().empty());
  std::vector<GpuActivity> out;
  timing.collect(0, true, &out);  // no session, no notes
  REQUIRE(out.empty());
  GpuStats stats;
  timing.fill_stats(&stats);
  REQUIRE(stats.untimed == 0);
}

}  // namespace
}  // namespace gpuprobe::gpu
