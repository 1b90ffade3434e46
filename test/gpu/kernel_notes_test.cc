// The collector's side of gpuprobe::launch(), with CUDA's event functions replaced by fakes.
#include "gpu/kernel_notes.h"

#include <pthread.h>

#include <map>
#include <string>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::gpu {
namespace {

constexpr CallSite kSaxpy{"saxpy", "", "", 0, 0, Category::kCuda};

// Fake events: an int per event holding its state (1 done, 0 pending, -1 failed) and a time in ms.
struct FakeEvent {
  int state;
  float ms;
  bool destroyed = false;
};

detail::CudaEventOps fake_ops() {
  return detail::CudaEventOps{[](void* e) { return static_cast<FakeEvent*>(e)->state; },
                              [](void* start, void* end, float* ms) {
                                *ms = static_cast<FakeEvent*>(end)->ms -
                                      static_cast<FakeEvent*>(start)->ms;
                                return true;
                              },
                              [](void* e) { static_cast<FakeEvent*>(e)->destroyed = true; }};
}

detail::KernelNote note_with(FakeEvent* anchor, FakeEvent* start, FakeEvent* end,
                             const detail::CudaEventOps* ops) {
  detail::KernelNote n{};
  n.site = &kSaxpy;
  n.begin = 100;
  n.end = 200;
  n.grid[0] = 64, n.grid[1] = n.grid[2] = 1;
  n.block[0] = 256, n.block[1] = n.block[2] = 1;
  n.dynamic_shared_memory = 1024;
  n.device = 0;
  n.stream = 7;
  n.bytes = 3e6;
  n.flops = 2e6;
  n.anchor_event = anchor;
  n.anchor_ticks = 1000;
  n.start_event = start;
  n.end_event = end;
  n.ops = ops;
  return n;
}

TEST_CASE("Without CUPTI, launches become kernel records timed by their CUDA events") {
  const detail::CudaEventOps ops = fake_ops();
  FakeEvent anchor{1, 0.0f};
  FakeEvent start{1, 0.002f}, end{1, 0.005f};  // 2 us and 5 us after the anchor
  FakeEvent pending_start{1, 0.010f}, pending_end{0, 0.0f};
  KernelNoteQueue& queue = KernelNoteQueue::get();
  queue.begin_session(false);
  REQUIRE(detail::note_kernel_launch(note_with(&anchor, &start, &end, &ops)));
  REQUIRE(detail::note_kernel_launch(note_with(&anchor, &pending_start, &pending_end, &ops)));

  KernelNoteTracker tracker(0.5, 1'000'000);  // 2 ticks per ns
  tracker.collect();
  std::vector<GpuActivity> out;
  tracker.timed(false, &out);
  REQUIRE(out.size() == 1);
  const GpuActivity& k = out[0];
  REQUIRE(k.kind == GpuActivityKind::kKernel);
  REQUIRE(std::string(k.name) == "saxpy");
  REQUIRE(k.range == &kSaxpy);
  REQUIRE(k.start == 1000 + 4000);  // anchor + 2 us at 2 ticks/ns
  REQUIRE(k.end == 1000 + 10000);
  REQUIRE((k.grid[0] == 64 && k.block[0] == 256));
  REQUIRE(k.dynamic_shared_memory == 1024);
  REQUIRE(k.stream == 7);
  REQUIRE(k.declared_bytes == 3e6);
  REQUIRE(k.declared_flops == 2e6);
  REQUIRE((start.destroyed && end.destroyed));
  REQUIRE_FALSE(pending_end.destroyed);  // still running: kept

  tracker.timed(true, &out);  // the session ends before it completes: given up, counted
  REQUIRE(out.size() == 1);
  REQUIRE(tracker.untimed() == 1);
  REQUIRE(pending_end.destroyed);
  queue.end_session();
  REQUIRE(anchor.destroyed == false);  // anchors belong to the queue, made through record_and_sync
}

TEST_CASE("With CUPTI, a launch's kernels get its declared cost") {
  KernelNoteQueue& queue = KernelNoteQueue::get();
  queue.begin_session(true);
  detail::KernelNote note = note_with(nullptr, nullptr, nullptr, nullptr);
  REQUIRE(detail::note_kernel_launch(note));  // from this thread
  KernelNoteTracker tracker(1.0, 1'000'000);
  tracker.collect();

  GpuActivity launch;
  launch.kind = GpuActivityKind::kRuntimeApi;
  launch.name = "cudaLaunchKernel";
  launch.correlation = 42;
  launch.thread_id = static_cast<std::uint32_t>(pthread_self());
  launch.start = 120;
  launch.end = 150;
  GpuActivity kernel;
  kernel.kind = GpuActivityKind::kKernel;
  kernel.name = "saxpy_kernel(int, float, float const*, float*)";
  kernel.correlation = 42;
  GpuActivity other = kernel;
  other.correlation = 43;  // launched elsewhere
  std::vector<GpuActivity> records = {kernel, launch, other};
  tracker.annotate(&records, 0, 300);
  REQUIRE(records[0].declared_bytes == 3e6);
  REQUIRE(records[0].declared_flops == 2e6);
  REQUIRE(records[2].declared_bytes == 0);
  queue.end_session();
}

TEST_CASE("No session, no note") {
  detail::KernelNote note{};
  note.site = &kSaxpy;
  REQUIRE_FALSE(detail::note_kernel_launch(note));
}

}  // namespace
}  // namespace gpuprobe::gpu
