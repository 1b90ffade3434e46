// GPU activity in bursts (gpu_burst=): four threads launch kernels at full rate while the
// collector switches CUPTI's kinds and callbacks on and off every few tens of milliseconds. No
// crash, no record lost, kernels only inside the bursts the trace's counter shows, every API
// call with a real start; and CUPTI records everything again in the next session.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/gpu_check.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"

__global__ void tiny_kernel(int* out) {
  if (out != nullptr) *out = 1;
}

namespace {

constexpr int kThreads = 4;
constexpr auto kRun = std::chrono::milliseconds(1200);

// Launches in batches of 100 inside a range until `stop`; returns the kernels launched.
long launch_until(const std::atomic<bool>& stop) {
  long launched = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    GPUPROBE_RANGE("batch");
    for (int i = 0; i < 100; ++i) tiny_kernel<<<1, 1>>>(nullptr);
    launched += 100;
    CUDA_OK(cudaStreamSynchronize(nullptr));
  }
  return launched;
}

}  // namespace

int main() {
  using gpuprobe::GpuActivityKind;
  gpuprobe::gpu_test::require_device();
  CUDA_OK(cudaFree(nullptr));

  auto sink = std::make_shared<gpuprobe::testing::CaptureSink>();
  gpuprobe::Session session("cupti=kernel+runtime,gpu_burst=40ms/150ms,flush_ms=5", {sink});
  CHECK(session.ok());
  std::atomic<bool> stop{false};
  std::vector<long> launched(kThreads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] { launched[t] = launch_until(stop); });
  }
  std::this_thread::sleep_for(kRun);
  stop = true;
  for (std::thread& w : workers) w.join();
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(session.stop().ok());
  const gpuprobe::Stats stats = session.stats();
  long total = 0;
  for (long n : launched) total += n;

  // When recording was on, from the counter.
  std::vector<std::pair<std::int64_t, std::int64_t>> on;
  std::int64_t since = -1;
  int switches = 0;
  for (const auto& e : sink->events()) {
    if (e.type != gpuprobe::EventType::kCounter || e.name != gpuprobe::kGpuRecordingCounter)
      continue;
    ++switches;
    if (e.value != 0 && since < 0) since = e.begin_ns;
    if (e.value == 0 && since >= 0) {
      on.emplace_back(since, e.begin_ns);
      since = -1;
    }
  }
  const gpuprobe::TimeBase time = sink->time();
  std::size_t kernels = 0, outside = 0, calls = 0, bad_calls = 0;
  const std::int64_t slack_ns = 20'000'000;  // work launched just before a switch off
  for (const gpuprobe::GpuActivity& a : sink->gpu()) {
    const std::int64_t start = time.wall_ns(a.start);
    if (a.kind == GpuActivityKind::kKernel) {
      ++kernels;
      const bool inside = std::any_of(on.begin(), on.end(), [&](const auto& span) {
        return start >= span.first && start <= span.second + slack_ns;
      });
      outside += !inside;
    } else if (a.kind == GpuActivityKind::kRuntimeApi) {
      ++calls;
      bad_calls += a.end < a.start || time.duration_ns(a.start, a.end) > 1'000'000'000;
    }
  }
  std::printf(
      "bursts: %d switches, %zu bursts, %zu of %ld kernels recorded, %zu outside, %zu calls "
      "(%zu bad), stats: sampled %d bursts %llu recorded %.3f s dropped %llu (untimed %llu)\n",
      switches, on.size(), kernels, total, outside, calls, bad_calls, stats.gpu.sampled ? 1 : 0,
      static_cast<unsigned long long>(stats.gpu.bursts),
      static_cast<double>(stats.gpu.recorded_ns) / 1e9,
      static_cast<unsigned long long>(stats.gpu.dropped),
      static_cast<unsigned long long>(stats.gpu.untimed));
  CHECK(stats.gpu.status == "cupti");
  CHECK(stats.gpu.sampled);
  CHECK(stats.gpu.bursts >= 6);  // 1.2 s / 150 ms
  CHECK(on.size() >= 6);
  CHECK(stats.gpu.dropped == 0);
  CHECK(kernels > 0);
  CHECK(outside == 0);
  CHECK(static_cast<long>(kernels) < total * 6 / 10);  // 40 ms in 150: about 27 %
  CHECK(calls > 0);
  CHECK(bad_calls == 0);

  // The next session, without bursts, gets every kernel: nothing was left switched off.
  auto again = std::make_shared<gpuprobe::testing::CaptureSink>();
  {
    gpuprobe::Session next("cupti=kernel+runtime", {again});
    CHECK(next.ok());
    for (int i = 0; i < 1000; ++i) tiny_kernel<<<1, 1>>>(nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    CHECK(next.stop().ok());
    CHECK(!next.stats().gpu.sampled);
  }
  std::size_t later = 0;
  for (const gpuprobe::GpuActivity& a : again->gpu()) later += a.kind == GpuActivityKind::kKernel;
  std::printf("next session: %zu of 1000 kernels\n", later);
  CHECK(later == 1000);
  return gpuprobe::gpu_test::finish();
}
