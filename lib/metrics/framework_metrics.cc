#include "metrics/framework_metrics.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "formats/torch_events.h"

namespace gpuprobe::metrics {
namespace {

namespace te = formats::torch_events;

bool starts_with(const char* name, const char* prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

// Counters the Python side records, and the metric each becomes: its running totals
// (monotonic: counters) and its levels (gauges).
struct CounterMetric {
  const char* event;
  const char* metric;
  const char* type;
  const char* help;
};
constexpr CounterMetric kCounters[] = {
    {te::kCacheHits, "gpuprobe_compile_cache_hits_total", "counter",
     "torch.compile cache hits counted by gpuprobe.torch.watch_compile since it opened."},
    {te::kCacheMisses, "gpuprobe_compile_cache_misses_total", "counter",
     "torch.compile cache misses since the watcher opened."},
    {te::kAllocatedBytes, "gpuprobe_cuda_allocated_bytes", "gauge",
     "Bytes the CUDA caching allocator has handed out (torch.cuda.memory_stats)."},
    {te::kReservedBytes, "gpuprobe_cuda_reserved_bytes", "gauge",
     "Bytes the CUDA caching allocator holds from the driver."},
    {te::kInactiveSplitBytes, "gpuprobe_cuda_inactive_split_bytes", "gauge",
     "Bytes in the allocator's inactive split blocks: fragmentation."},
    {te::kAllocRetries, "gpuprobe_cuda_alloc_retries_total", "counter",
     "Allocations the CUDA caching allocator retried after freeing its cache."},
    {te::kOoms, "gpuprobe_cuda_ooms_total", "counter", "CUDA out-of-memory errors."},
};

}  // namespace

bool FrameworkMetrics::add(const Event& e, const TimeBase& time) {
  if (e.type == EventType::kGpu) return false;
  const Category category = e.site->category;
  const char* name = e.site->name;
  if (category == Category::kCompile) {
    if (e.type == EventType::kRange && starts_with(name, te::kCompile)) {
      compiles.add(duration_seconds(time, e));
    } else if (e.type == EventType::kInstant) {
      recompiles += starts_with(name, te::kRecompile);
      graph_breaks += starts_with(name, te::kGraphBreak);
      eager_fallbacks += starts_with(name, te::kEagerFallback);
      recompile_limit_hits += starts_with(name, te::kRecompileLimitHit);
    }
  } else if (category == Category::kGc) {
    if (e.type == EventType::kRange && starts_with(name, te::kGcGeneration)) {
      const int generation = std::atoi(name + std::strlen(te::kGcGeneration));
      gc_pauses[generation].add(duration_seconds(time, e));
    }
  } else if (category != Category::kAllocator) {
    return false;
  }
  if (e.type == EventType::kCounter) {
    for (const CounterMetric& c : kCounters) {
      if (std::strcmp(name, c.event) == 0) latest[c.metric] = e.value;
    }
  }
  return true;  // the framework's events: not the program's ranges
}

void FrameworkMetrics::write(TextExposition* out) const {
  if (compiles.count > 0 || recompiles + graph_breaks + eager_fallbacks > 0) {
    out->family("gpuprobe_compile_duration_seconds", "histogram",
                "torch.compile frame compiles (count: compiles), gpuprobe.torch.watch_compile.");
    compiles.write(out, "gpuprobe_compile_duration_seconds", {});
    const std::pair<const char*, std::uint64_t> counts[] = {
        {"gpuprobe_compile_recompiles_total", recompiles},
        {"gpuprobe_compile_graph_breaks_total", graph_breaks},
        {"gpuprobe_compile_eager_fallbacks_total", eager_fallbacks},
        {"gpuprobe_compile_recompile_limit_hits_total", recompile_limit_hits}};
    for (const auto& [metric, n] : counts) {
      out->family(metric, "counter", "torch.compile events seen by gpuprobe.torch.watch_compile.");
      out->sample(metric, {}, static_cast<double>(n));
    }
  }
  if (!gc_pauses.empty()) {
    out->family("gpuprobe_gc_pause_seconds", "histogram",
                "Python garbage-collector pauses, by generation (gpuprobe.watch_gc).");
    for (const auto& [generation, h] : gc_pauses) {
      const std::string g = std::to_string(generation);
      h.write(out, "gpuprobe_gc_pause_seconds", {{"generation", g}});
    }
  }
  for (const CounterMetric& c : kCounters) {
    const auto it = latest.find(c.metric);
    if (it == latest.end()) continue;
    out->family(c.metric, c.type, c.help);
    out->sample(c.metric, {}, it->second);
  }
}

}  // namespace gpuprobe::metrics
