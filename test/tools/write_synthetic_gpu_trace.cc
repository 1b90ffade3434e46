// Writes a trace with known GPU activity through a real sink, for readers that need kernels
// (HTA's kernel and idle-time analyses, TensorBoard, XProf) on machines without a GPU:
// three ProfilerSteps of 20 launches each on one thread, alternating a 20 us "gemm_kernel" and a
// 3 us "relu_kernel" on stream 7, each starting 6 us after its cudaLaunchKernel began, launches
// 30 us apart. Each step: 600 us, GPU busy 230 us (38.3 %), one 599 us "forward" range.
//
//   write_synthetic_gpu_trace SINK=VALUE [RANK [SPACING_US]]
//     e.g. chrome=trace.json, tensorboard=logdir; RANK (default 0) names the trace's rank and
//     SPACING_US (default 30) the time between launches, to make a slower rank.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tools/synthetic_trace.h"

int main(int argc, char** argv) {
  using namespace gpuprobe;
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s SINK=VALUE [RANK [SPACING_US]]\n", argv[0]);
    return 2;
  }
  TraceInfo info = test::synthetic_info("synthetic", 1);
  info.rank = argc > 2 ? std::atoi(argv[2]) : 0;
  info.world_size = 1;
  const std::uint64_t spacing_ns = (argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 30) * 1000;

  static constexpr CallSite kStep{"ProfilerStep", "", "", 0, 0, Category::kStep};
  static constexpr CallSite kForward{"forward", "", "", 0, 0, Category::kApp};
  std::vector<GpuActivity> activities;
  activities.reserve(120);
  std::vector<Event> events;
  std::uint64_t t = 1000;
  for (int step = 0; step < 3; ++step) {
    const std::uint64_t step_begin = t;
    for (int k = 0; k < 20; ++k) {
      GpuActivity launch;
      launch.kind = GpuActivityKind::kRuntimeApi;
      launch.name = "cudaLaunchKernel";
      launch.correlation = static_cast<std::uint32_t>(step * 100 + k + 1);
      launch.thread_id = 4243;
      launch.os_tid = 4243;
      launch.cbid = 211;
      launch.start = t;
      launch.end = t + 4000;
      activities.push_back(launch);
      GpuActivity kernel;
      kernel.kind = GpuActivityKind::kKernel;
      kernel.name = k % 2 ? "gemm_kernel" : "relu_kernel";
      kernel.correlation = launch.correlation;
      kernel.context = 1;
      kernel.stream = 7;
      kernel.grid[0] = 128;
      kernel.grid[1] = kernel.grid[2] = 1;
      kernel.block[0] = 256;
      kernel.block[1] = kernel.block[2] = 1;
      kernel.start = t + 6000;
      kernel.end = kernel.start + (k % 2 ? 20000 : 3000);
      activities.push_back(kernel);
      t += spacing_ns;
    }
    events.push_back(Event{EventType::kRange, 0, &kStep, step_begin, t, static_cast<double>(step)});
    events.push_back(Event{EventType::kRange, 0, &kForward, step_begin, t - 1000, 0.0});
  }
  for (const GpuActivity& a : activities) {
    events.push_back(Event::from_gpu(a));
  }
  return test::write_synthetic(argv[1], info, events, "main");
}
