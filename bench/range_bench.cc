// The cost of recording and of getting records out, measured side by side in one run:
//   floor        two raw clock reads and a store: what any timestamped range must do
//   Range_*      GPUPROBE_RANGE (begin + end) recording, with NVTX on and off; no session;
//                compiled out (range_bench_disabled.cc)
//   Nvtx, ClockGettime   the parts a range could be built from instead
//   CollectorDrain       records drained from a ring, decoded and handed to a sink, per second
//   ChromeSink           events formatted as Chrome JSON and written to a file, per second
//   PerfettoSink         the same events as Perfetto protobuf, per second and bytes per event
// bench/run.sh runs it and turns the times into ratios against the floor.
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "sinks/chrome_trace_sink.h"
#include "sinks/perfetto_sink.h"

#if GPUPROBE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gpuprobe {
namespace {

// Counts what it is given and nothing else: the cheapest possible consumer.
class CountingSink : public Sink {
 public:
  Status open(const TraceInfo&) override { return {}; }
  Status write(const EventBatch& batch) override {
    events += batch.size;
    return {};
  }
  Status close(const Stats&, const TimeBase&) override { return {}; }
  std::uint64_t events = 0;
};

void BM_Floor_TwoClockReadsAndStore(benchmark::State& state) {
  detail::Record slots[64];
  unsigned i = 0;
  for (auto _ : state) {
    const std::uint64_t begin = __builtin_ia32_rdtsc();
    const std::uint64_t end = __builtin_ia32_rdtsc();
    slots[i++ & 63] = detail::Record{begin, end, nullptr, detail::RecordKind::kRange, 0};
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(slots);
}
BENCHMARK(BM_Floor_TwoClockReadsAndStore);

// Recording into a ring that is drained (Session::flush, outside the timed region) every
// kDrainEvery ranges, so the timed loop measures the recording path with the ring in cache, as
// with the default 1 MiB ring, and never the (cheaper) drop path.
constexpr int kDrainEvery = 4096;

// Runs `record` once per iteration in a session started from `config`. With `drain_every` > 0
// the ring is flushed every that many iterations with the timer paused; with 0 the collector
// thread drains on its own, concurrently. Fails the case if anything was dropped.
template <class Record>
void run_recording(benchmark::State& state, const char* config, int drain_every, Record&& record) {
  auto sink = std::make_shared<CountingSink>();
  Session session(config, {sink});
  if (!session.ok()) {
    state.SkipWithError(session.error().c_str());
    return;
  }
  int until_drain = drain_every;
  for (auto _ : state) {
    record();
    if (drain_every > 0 && --until_drain == 0) {
      state.PauseTiming();
      session.flush();
      until_drain = drain_every;
      state.ResumeTiming();
    }
  }
  if (!session.stop().ok()) state.SkipWithError("the session failed");
  const Stats stats = session.stats();
  state.counters["dropped"] = static_cast<double>(stats.dropped);
  if (stats.dropped != 0) state.SkipWithError("the ring overflowed: the timing includes drops");
}

void record_static_range() {
  GPUPROBE_RANGE("bench_range");
  benchmark::ClobberMemory();
}

void BM_Range_Recording(benchmark::State& state) {
  run_recording(state, "ring=16384,flush_ms=10000,nvtx=on", kDrainEvery, record_static_range);
}
BENCHMARK(BM_Range_Recording);

void BM_Range_RecordingNoNvtx(benchmark::State& state) {
  run_recording(state, "ring=16384,flush_ms=10000,nvtx=off", kDrainEvery, record_static_range);
}
BENCHMARK(BM_Range_RecordingNoNvtx);

// The same range while the collector thread drains concurrently on the other core, as in
// production: ring slots move between the cores' caches. The ring is large (8 MiB) so that the
// collector's wake-up jitter cannot overflow it.
void BM_Range_RecordingConcurrentDrain(benchmark::State& state) {
  run_recording(state, "ring=262144,flush_ms=1,nvtx=on", 0, record_static_range);
}
BENCHMARK(BM_Range_RecordingConcurrentDrain);

void BM_Range_DynamicName(benchmark::State& state) {
  const std::string name = "dynamic/range/name";
  run_recording(state, "ring=16384,flush_ms=10000,nvtx=off", kDrainEvery, [&name] {
    ScopedRange r(name);
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_Range_DynamicName);

// The per-thread cache's hit: a name seen before in this session, looked up again (what a
// dynamic name costs a range, and a Python range whose name is a new str each time). Eight
// names of the lengths Python code gives, round robin.
void BM_Intern_Cached(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back("request handler " + std::to_string(i) + "/step");
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(detail::intern(names[i++ & 7], Category::kApp));
  }
}
BENCHMARK(BM_Intern_Cached);

// No ClobberMemory here: what remains of a range with no session is exactly the gate's load and
// branch, which the compiler cannot remove (the load is atomic).
void BM_Range_NoSession(benchmark::State& state) {
  for (auto _ : state) {
    GPUPROBE_RANGE("bench_range");
  }
}
BENCHMARK(BM_Range_NoSession);

#if GPUPROBE_HAVE_NVTX
void BM_Nvtx_PushPopAlone(benchmark::State& state) {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("gpuprobe-bench");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF4E79A7;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "bench_range";
  for (auto _ : state) {
    nvtxDomainRangePushEx(domain, &a);
    nvtxDomainRangePop(domain);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Nvtx_PushPopAlone);
#endif

void BM_ClockGettime_Monotonic(benchmark::State& state) {
  for (auto _ : state) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_ClockGettime_Monotonic);

// Records fill one ring while the collector sleeps (paused timing); then stop() drains them,
// decodes them and hands them to a counting sink (timed).
void BM_CollectorDrain(benchmark::State& state) {
  const std::int64_t records = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    auto sink = std::make_shared<CountingSink>();
    Session session("ring=" + std::to_string(records) + ",flush_ms=10000,nvtx=off", {sink});
    for (std::int64_t i = 0; i < records; ++i) GPUPROBE_INSTANT("drained");
    state.ResumeTiming();
    const Status stopped = session.stop();
    state.PauseTiming();
    if (!stopped.ok()) state.SkipWithError("the session failed");
    if (sink->events != static_cast<std::uint64_t>(records))
      state.SkipWithError("records were lost");
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * records);
}
BENCHMARK(BM_CollectorDrain)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// Formats a realistic batch (nested ranges on four threads, some counters) into a file.
template <class SinkType>
void run_file_sink(benchmark::State& state, const std::string& path) {
  static constexpr CallSite kSites[] = {
      {"forward", "", "", 0, 0, Category::kApp},
      {"layer_norm", "", "", 0, 0, Category::kApp},
      {"attention/softmax", "", "", 0, 0, Category::kApp},
      {"queue_depth", "", "", 0, 0, Category::kApp},
  };
  std::vector<ThreadInfo> threads(4);
  for (int t = 0; t < 4; ++t) threads[t].os_tid = 1000 + t;
  std::vector<Event> events;
  std::uint64_t tick = 1'000'000'000;
  for (int i = 0; i < 16384; ++i) {
    const bool is_counter = i % 8 == 7;
    const EventType type = is_counter ? EventType::kCounter : EventType::kRange;
    events.push_back(Event{type, static_cast<std::uint32_t>(i % 4), &kSites[i % 4], tick,
                           is_counter ? tick : tick + 1234 + i % 977, is_counter ? i * 0.5 : 0.0});
    tick += 2500;
  }
  const TimeBase time(0, 1'764'000'000'000'000'000, 0.37);
  const EventBatch batch{events.data(), events.size(), &time, &threads};
  TraceInfo info;
  info.pid = 4242;
  info.start_wall_ns = time.wall_ns(0);
  SinkType sink(path);
  if (Status s = sink.open(info); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state) {
    if (Status s = sink.write(batch); !s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
  }
  Stats stats;
  stats.threads = threads;
  const Status closed = sink.close(stats, time);
  const double bytes = static_cast<double>(std::filesystem::file_size(path));
  state.counters["MB_per_s"] = benchmark::Counter(bytes / 1e6, benchmark::Counter::kIsRate);
  state.counters["bytes_per_event"] =
      bytes / static_cast<double>(state.iterations() * static_cast<std::int64_t>(events.size()));
  std::filesystem::remove(path);
  if (!closed.ok()) state.SkipWithError(closed.message().c_str());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events.size()));
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + std::to_string(getpid())))
      .string();
}

void BM_ChromeSink(benchmark::State& state) {
  run_file_sink<sinks::ChromeTraceSink>(state, temp_path("bench_trace.json."));
}
BENCHMARK(BM_ChromeSink)->Unit(benchmark::kMillisecond);

void BM_ChromeSinkGzip(benchmark::State& state) {
  run_file_sink<sinks::ChromeTraceSink>(state, temp_path("bench_trace.gz.") + ".json.gz");
}
BENCHMARK(BM_ChromeSinkGzip)->Unit(benchmark::kMillisecond);

void BM_PerfettoSink(benchmark::State& state) {
  run_file_sink<sinks::PerfettoSink>(state, temp_path("bench_trace.pftrace."));
}
BENCHMARK(BM_PerfettoSink)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuprobe

BENCHMARK_MAIN();
