#include "gpu/gpu_pipeline.h"

#include <memory>
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
