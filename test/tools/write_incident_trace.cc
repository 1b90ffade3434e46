// Writes an incident with known answers through a real sink, for the report page's tests: N
// "request" ranges on one thread, each holding a "forward" range and launching a kernel on GPU 0
// (and every other one a kernel on GPU 1). Requests [0.45 N, 0.55 N) are the incident: they take
// 20 ms instead of about 2, so GPU busy falls; it begins with a 15 ms compile and 20 graph
// breaks, its first 50 requests each call cudaMalloc for 1 ms and every tenth waits 2 ms in
// cudaDeviceSynchronize. Two GC pauses of 8 ms fall in requests N/10 and N/3. The caching
// allocator's counters are sampled at each request's start: 2 GiB allocated throughout, 2.5 GiB
// reserved until each of the incident's cudaMallocs adds 64 MiB — fragmentation rises from 0.2
// to 1 - 2 / 5.625 = 0.644 and stays there.
//
//   write_incident_trace SINK=VALUE [N]    (N: 2000 by default, at least 100)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <vector>

#include "tools/synthetic_trace.h"

int main(int argc, char** argv) {
  using namespace gpuprobe;
  const long n = argc > 2 ? std::atol(argv[2]) : 2000;
  if (argc < 2 || argc > 3 || n < 100) {
    std::fprintf(stderr, "usage: %s SINK=VALUE [N >= 100]\n", argv[0]);
    return 2;
  }
  const TraceInfo info = test::synthetic_info("incident", 2);

  static constexpr CallSite kRequest{"request", "", "", 0, 0, Category::kApp};
  static constexpr CallSite kForward{"forward", "", "", 0, 0, Category::kApp};
  static constexpr CallSite kGc{"gc gen2", "", "", 0, 0, Category::kGc};
  static constexpr CallSite kCompile{"torch.compile 0/1", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite kBreak{
      "graph break: call_function print", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite kAllocated{"cuda allocated bytes", "", "", 0, 0, Category::kAllocator};
  static constexpr CallSite kReserved{"cuda reserved bytes", "", "", 0, 0, Category::kAllocator};
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  double reserved = 2.5 * kGiB;
  constexpr std::uint64_t kMs = 1'000'000, kUs = 1'000;
  std::deque<GpuActivity> gpu;  // stable: events point at them
  std::vector<Event> events;
  std::uint32_t correlation = 0;
  const auto api = [&](const char* name, std::uint64_t begin, std::uint64_t length) {
    GpuActivity& a = gpu.emplace_back();
    a.kind = GpuActivityKind::kRuntimeApi;
    a.name = name;
    a.correlation = ++correlation;
    a.thread_id = a.os_tid = 4243;
    a.start = begin;
    a.end = begin + length;
    return a.correlation;
  };
  const auto kernel = [&](std::uint32_t device, std::uint64_t begin, std::uint64_t length) {
    GpuActivity& k = gpu.emplace_back();
    k.kind = GpuActivityKind::kKernel;
    k.name = device == 0 ? "gemm_kernel" : "reduce_kernel";
    k.correlation = api("cudaLaunchKernel", begin - 50 * kUs, 5 * kUs);
    k.device = device;
    k.context = 1;
    k.stream = 7;
    k.grid[0] = 128;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    k.start = begin;
    k.end = begin + length;
  };
  const long incident_begin = n * 45 / 100, incident_end = n * 55 / 100;
  std::uint64_t t = kMs;
  for (long i = 0; i < n; ++i) {
    const bool incident = i >= incident_begin && i < incident_end;
    const bool gc = i == n / 10 || i == n / 3;
    const std::uint64_t jitter = (static_cast<std::uint64_t>(i) * 2654435761u >> 16) % 200 * kUs;
    const std::uint64_t length = (incident ? 20 * kMs : gc ? 10 * kMs : 2 * kMs) + jitter;
    events.push_back({EventType::kRange, 0, &kRequest, t, t + length, 0.0});
    events.push_back({EventType::kCounter, 0, &kAllocated, t, t, 2 * kGiB});
    events.push_back({EventType::kCounter, 0, &kReserved, t, t, reserved});
    events.push_back({EventType::kRange, 0, &kForward, t + 200 * kUs, t + length - 200 * kUs, 0.0});
    kernel(0, t + 350 * kUs, 1400 * kUs);
    if (i % 2 == 0) kernel(1, t + 400 * kUs, 1000 * kUs);
    if (gc) events.push_back({EventType::kRange, 0, &kGc, t + kMs, t + 9 * kMs, 0.0});
    if (i == incident_begin) {
      events.push_back({EventType::kRange, 0, &kCompile, t + 2 * kMs, t + 17 * kMs, 0.0});
      for (int b = 0; b < 20; ++b)
        events.push_back({EventType::kInstant, 0, &kBreak, t + 17 * kMs + b * 10 * kUs, 0, 0.0});
    }
    if (incident && i < incident_begin + 50) {
      api("cudaMalloc", t + 3 * kMs, kMs);
      reserved += kGiB / 16;
    }
    if (incident && (i - incident_begin) % 10 == 0)
      api("cudaDeviceSynchronize", t + 5 * kMs, 2 * kMs);
    t += length + 500 * kUs;
  }
  for (const GpuActivity& a : gpu) events.push_back(Event::from_gpu(a));
  return test::write_synthetic(argv[1], info, events, "server");
}
