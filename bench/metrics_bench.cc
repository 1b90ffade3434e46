// What the Prometheus metrics cost the collector and a scrape, with 64 range names: adding a
// batch of ranges (the collector, every batch), copying the figures for the endpoint (the
// collector, every batch, under the lock a scrape also takes) and formatting them (the server's
// thread, once per scrape).
#include <benchmark/benchmark.h>

#include <deque>
#include <string>
#include <vector>

#include "metrics/session_metrics.h"

namespace {

using gpuprobe::CallSite;
using gpuprobe::Category;
using gpuprobe::Event;
using gpuprobe::EventBatch;
using gpuprobe::EventType;

constexpr int kNames = 64;

struct Workload {
  std::deque<std::string> names;
  std::vector<CallSite> sites;
  std::vector<Event> events;
  gpuprobe::TimeBase time{0, 0, 1.0};
  std::vector<gpuprobe::ThreadInfo> threads{1};
  gpuprobe::metrics::SessionMetrics metrics;

  Workload() {
    for (int i = 0; i < kNames; ++i) names.push_back("range_" + std::to_string(i));
    for (int i = 0; i < kNames; ++i) {
      sites.push_back(CallSite{names[i].c_str(), "", "", 0, 0, Category::kApp});
    }
    // 1 000 ranges of every name, 1 us to 1 s, so every bucket has counts.
    for (int i = 0; i < kNames * 1000; ++i) {
      const auto duration = static_cast<std::uint64_t>(1000) << (i % 20);
      events.push_back(Event{EventType::kRange, 0, &sites[i % kNames], 0, duration, 0.0});
    }
    metrics.add(batch(events.size()));
  }
  EventBatch batch(std::size_t n) const { return EventBatch{events.data(), n, &time, &threads}; }
};

void BM_Metrics_AddBatchOf1000Ranges(benchmark::State& state) {
  Workload w;
  for (auto _ : state) w.metrics.add(w.batch(1000));
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Metrics_AddBatchOf1000Ranges);

void BM_Metrics_PublishCopy(benchmark::State& state) {
  Workload w;
  gpuprobe::metrics::MetricValues published;
  for (auto _ : state) {
    published = w.metrics.values();
    benchmark::DoNotOptimize(published.events);
  }
}
BENCHMARK(BM_Metrics_PublishCopy);

void BM_Metrics_Exposition(benchmark::State& state) {
  Workload w;
  std::size_t bytes = 0;
  for (auto _ : state) bytes = w.metrics.exposition().size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Metrics_Exposition)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
