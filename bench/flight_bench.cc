// What the flight recorder costs the collector, against what a trace output costs it for the
// same events: a batch of 1 000 ranges handed to the Chrome sink (writing to /dev/null) and to
// the flight recorder (encoding, eviction, two triggers watching one name); GPU records
// encoded; and writing one dump of 100 000 events (Perfetto and Chrome), off the collector.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "flight/dump_writer.h"
#include "flight/event_store.h"
#include "flight/flight_options.h"
#include "flight/flight_recorder.h"
#include "session/builtin_sinks.h"
#include "sinks/chrome_trace_sink.h"

namespace {

using namespace gpuprobe;

constexpr int kNames = 64;

struct Workload {
  std::deque<std::string> names;
  std::vector<CallSite> sites;
  std::vector<Event> events;
  std::vector<GpuActivity> kernels;
  std::vector<Event> kernel_events;
  TimeBase time{0, 0, 1.0};
  std::vector<ThreadInfo> threads{4};

  Workload() {
    for (int i = 0; i < kNames; ++i) names.push_back("range_" + std::to_string(i));
    for (int i = 0; i < kNames; ++i) {
      sites.push_back(CallSite{names[i].c_str(), "", "", 0, 0, Category::kApp});
    }
    for (int i = 0; i < 1000; ++i) {
      const std::uint64_t begin = static_cast<std::uint64_t>(i) * 20'000;
      events.push_back(Event{EventType::kRange, static_cast<std::uint32_t>(i % 4),
                             &sites[i % kNames], begin, begin + 15'000, 0.0});
    }
    kernels.resize(1000);
    for (int i = 0; i < 1000; ++i) {
      GpuActivity& a = kernels[i];
      a.start = static_cast<std::uint64_t>(i) * 5000;
      a.end = a.start + 3000;
      a.name = "void elementwise_kernel<128, 4>(int, float*)";
      a.correlation = 1000 + i;
      a.device = 0;
      a.context = 1;
      a.stream = 7;
      a.grid[0] = 1024, a.grid[1] = 1, a.grid[2] = 1;
      a.block[0] = 128, a.block[1] = 1, a.block[2] = 1;
      a.registers_per_thread = 32;
      a.range = &sites[i % kNames];
    }
    for (const GpuActivity& a : kernels) kernel_events.push_back(Event::from_gpu(a));
  }
  // The same events later in time, as the next batch would be.
  EventBatch next(std::vector<Event>* shifted, std::uint64_t round) const {
    *shifted = events;
    for (Event& e : *shifted) e.begin += round * 20'000'000, e.end += round * 20'000'000;
    return EventBatch{shifted->data(), shifted->size(), &time, &threads};
  }
};

void BM_Collector_ChromeSinkBatchOf1000Ranges(benchmark::State& state) {
  Workload w;
  sinks::ChromeTraceSink sink("/dev/null");
  if (!sink.open(TraceInfo{}).ok()) state.SkipWithError("cannot open /dev/null");
  std::vector<Event> batch;
  std::uint64_t round = 0;
  for (auto _ : state) static_cast<void>(sink.write(w.next(&batch, round++)));
  static_cast<void>(sink.close(Stats{}, w.time));
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Collector_ChromeSinkBatchOf1000Ranges);

void BM_Collector_FlightRecorderBatchOf1000Ranges(benchmark::State& state) {
  Workload w;
  flight::FlightOptions options;
  options.seconds = 30;
  options.dir = "/tmp/gpuprobe_flight_bench_" + std::to_string(getpid());
  std::vector<flight::TriggerSpec> triggers;
  static_cast<void>(flight::parse_triggers("slow:range_0>1s+p99:range_0>1s/10s", &triggers));
  options.triggers = triggers;
  flight::FlightRecorder recorder(options, core::ClockSource::kMonotonic, w.time);
  if (!recorder.open(TraceInfo{}).ok()) state.SkipWithError("cannot open the recorder");
  std::vector<Event> batch;
  std::uint64_t round = 0;
  for (auto _ : state) static_cast<void>(recorder.write(w.next(&batch, round++)));
  static_cast<void>(recorder.close(Stats{}, w.time));
  std::filesystem::remove_all(options.dir);
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Collector_FlightRecorderBatchOf1000Ranges);

void BM_Flight_StoreAppend1000Kernels(benchmark::State& state) {
  Workload w;
  flight::EventStore store(64 << 20);
  for (auto _ : state) {
    for (const Event& e : w.kernel_events) store.append(e);
    store.evict(store.latest_tick());
  }
  state.counters["bytes_per_kernel"] =
      static_cast<double>(store.counters().bytes) / static_cast<double>(store.counters().events);
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Flight_StoreAppend1000Kernels);

// One dump of a window the store holds: rounds of 1 000 ranges and 1 000 kernels, in the given
// formats. 50 rounds: 100 000 events; FullWindow: as many rounds as fill flight_mb=256.
void write_dump_of(benchmark::State& state, std::uint64_t rounds,
                   std::vector<std::string> formats) {
  session::register_builtin_sinks();
  Workload w;
  flight::EventStore store(256 << 20);
  std::vector<Event> batch;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    for (const Event& e : w.next(&batch, round)) store.append(e);
    for (const Event& e : w.kernel_events) store.append(e);
  }
  const flight::StoreSnapshot snapshot = store.snapshot();
  flight::FlightOptions options;
  options.seconds = 30;
  options.formats = std::move(formats);
  options.dir = "/tmp/gpuprobe_flight_bench_dumps_" + std::to_string(getpid());
  flight::DumpContext context;
  context.time = w.time;
  context.session.threads = w.threads;
  context.options = &options;
  int n = 0;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    flight::DumpJob job;
    job.name = "dump_" + std::to_string(n++);
    job.reason = "bench";
    job.to_tick = ~std::uint64_t{0} / 2;
    std::string path;
    if (!flight::write_dump(job, snapshot, context, &path).ok()) state.SkipWithError("dump");
    state.PauseTiming();
    bytes = 0;
    for (const auto& f : std::filesystem::recursive_directory_iterator(path))
      if (f.is_regular_file()) bytes += f.file_size();
    std::filesystem::remove_all(path);
    state.ResumeTiming();
  }
  std::filesystem::remove_all(options.dir);
  state.counters["events"] = static_cast<double>(store.counters().events);
  state.counters["store_MiB"] = static_cast<double>(store.counters().bytes) / (1 << 20);
  state.counters["written_MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(store.counters().events));
}

void BM_Flight_WriteDumpOf100kEvents(benchmark::State& state) {
  write_dump_of(state, 50, {"perfetto", "chrome"});
}
BENCHMARK(BM_Flight_WriteDumpOf100kEvents)->Unit(benchmark::kMillisecond);

// Not in the smoke test (--benchmark_filter): it fills 256 MiB. formats: 0 Perfetto, 1 Perfetto
// and Chrome, 2 the flight window (the recorder's own bytes).
void BM_FullWindow_WriteDumpOf256MiB(benchmark::State& state) {
  const std::vector<std::vector<std::string>> formats = {
      {"perfetto"}, {"perfetto", "chrome"}, {"window"}};
  write_dump_of(state, 7700, formats[static_cast<std::size_t>(state.range(0))]);
}
BENCHMARK(BM_FullWindow_WriteDumpOf256MiB)
    ->Arg(2)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("formats")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
