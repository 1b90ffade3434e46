// Writes a large trace through a real sink, for the conversion benchmark (bench/convert.sh):
// N events on 8 threads — nested ranges with 200 distinct names, a step every 10 000 events, a
// counter every 16 — and a kernel per 8 events on 4 streams with its launch call.
//
//   write_large_trace N SINK=PATH        e.g. 10000000 chrome=big.json
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/sink_registry.h"
#include "session/builtin_sinks.h"

int main(int argc, char** argv) {
  using namespace gpuprobe;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s N SINK=PATH\n", argv[0]);
    return 2;
  }
  const long long total = std::atoll(argv[1]);
  const std::string config = argv[2];
  std::unique_ptr<Sink> sink;
  session::register_builtin_sinks();
  if (Status s = core::SinkRegistry::get().create(config, &sink); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  TraceInfo info;
  info.pid = 7000;
  info.process_name = "large";
  info.start_wall_ns = 1'764'460'800'000'000'000;
  const TimeBase time(0, info.start_wall_ns, 1.0);
  std::vector<ThreadInfo> threads(8);
  for (int t = 0; t < 8; ++t) {
    threads[t].os_tid = 7001 + t;
    threads[t].name = "worker " + std::to_string(t);
  }
  std::deque<std::string> names;
  std::vector<CallSite> sites;
  for (int i = 0; i < 200; ++i) names.push_back("op_" + std::to_string(i));
  for (const std::string& n : names)
    sites.push_back(CallSite{n.c_str(), "", "", 0, 0, Category::kApp});
  static constexpr CallSite kStep{"ProfilerStep", "", "", 0, 0, Category::kStep};
  static constexpr CallSite kCounter{"queue_depth", "", "", 0, 0, Category::kApp};

  if (!sink->open(info).ok()) return 1;
  constexpr std::size_t kBatch = 8192;
  std::vector<Event> batch;
  std::vector<GpuActivity> gpu;
  batch.reserve(kBatch);
  gpu.reserve(kBatch);
  std::uint64_t t = 1000;
  long long step = 0, step_begin = 1000;
  for (long long i = 0; i < total; ++i) {
    const auto thread = static_cast<std::uint32_t>(i % 8);
    if (i % 10000 == 9999) {
      batch.push_back(Event{EventType::kRange, 0, &kStep, static_cast<std::uint64_t>(step_begin), t,
                            static_cast<double>(step++)});
      step_begin = static_cast<long long>(t);
    } else if (i % 16 == 15) {
      batch.push_back(
          Event{EventType::kCounter, thread, &kCounter, t, t, static_cast<double>(i % 97)});
    } else if (i % 8 == 3 || i % 8 == 4) {
      GpuActivity a;
      a.correlation = static_cast<std::uint32_t>(i / 8 + 1);
      if (i % 8 == 3) {
        a.kind = GpuActivityKind::kRuntimeApi;
        a.name = "cudaLaunchKernel";
        a.os_tid = a.thread_id = 7001 + static_cast<std::int64_t>(thread);
        a.start = t;
        a.end = t + 3000;
      } else {
        a.kind = GpuActivityKind::kKernel;
        a.name = names[static_cast<std::size_t>(i / 8 % 200)].c_str();
        a.stream = static_cast<std::uint32_t>(7 + i / 8 % 4);
        a.grid[0] = 128;
        a.block[0] = 256;
        a.start = t + 5000;
        a.end = t + 5000 + static_cast<std::uint64_t>(1000 + i % 5000);
      }
      gpu.push_back(a);
      batch.push_back(Event::from_gpu(gpu.back()));
    } else {
      batch.push_back(Event{EventType::kRange, thread, &sites[static_cast<std::size_t>(i % 200)], t,
                            t + 500 + static_cast<std::uint64_t>(i % 3000), 0.0});
    }
    t += 700;
    if (batch.size() == kBatch) {
      if (!sink->write(EventBatch{batch.data(), batch.size(), &time, &threads}).ok()) return 1;
      batch.clear();
      gpu.clear();
    }
  }
  if (!sink->write(EventBatch{batch.data(), batch.size(), &time, &threads}).ok()) return 1;
  Stats stats;
  stats.threads = threads;
  return sink->close(stats, time).ok() ? 0 : 1;
}
