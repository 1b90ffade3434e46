#include "metrics/framework_metrics.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "formats/compile_marks.h"
#include "formats/framework_events.h"

namespace gpuprobe::metrics {
namespace {

namespace fe = formats::framework_events;

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
    {fe::kCacheHits, "gpuprobe_compile_cache_hits_total", "counter",
     "torch.compile cache hits counted by gpuprobe.torch.watch_compile since it opened."},
    {fe::kCacheMisses, "gpuprobe_compile_cache_misses_total", "counter",
     "torch.compile cache misses since the watcher opened."},
    {fe::kAllocatedBytes, "gpuprobe_cuda_allocated_bytes", "gauge",
     "Bytes the CUDA caching allocator has handed out (torch.cuda.memory_stats)."},
    {fe::kReservedBytes, "gpuprobe_cuda_reserved_bytes", "gauge",
     "Bytes the CUDA caching allocator holds from the driver."},
    {fe::kInactiveSplitBytes, "gpuprobe_cuda_inactive_split_bytes", "gauge",
     "Bytes in the allocator's inactive split blocks: fragmentation."},
    {fe::kAllocRetries, "gpuprobe_cuda_alloc_retries_total", "counter",
     "Allocations the CUDA caching allocator retried after freeing its cache."},
    {fe::kOoms, "gpuprobe_cuda_ooms_total", "counter", "CUDA out-of-memory errors."},
};

// `value` when it is one of `known`, else "other": label values stay a bounded set whatever
// a trace holds.
template <typename Known>
std::string known_or_other(std::string_view value, const Known& known) {
  for (const char* k : known)
    if (value == k) return k;
  return "other";
}
std::string known_or_other(std::string_view value, std::initializer_list<const char*> known) {
  return known_or_other<std::initializer_list<const char*>>(value, known);
}

}  // namespace

void FrameworkMetrics::add_compile(const Event& e, const TimeBase& time) {
  const char* name = e.site->name;
  if (e.type == EventType::kRange) {
    if (starts_with(name, fe::kCompile)) compiles.add(duration_seconds(time, e));
    if (const std::string_view phase = formats::jax_phase(name); !phase.empty()) {
      jax_phases[known_or_other(phase, fe::kJaxPhases)].add(duration_seconds(time, e));
    }
    if (starts_with(name, fe::kTritonCompile)) triton_compiles.add(duration_seconds(time, e));
    if (starts_with(name, fe::kTritonCacheLoad)) triton_loads.add(duration_seconds(time, e));
    if (starts_with(name,
                    fe::kDynamoGuards)) {  // every compiled call: a string only for a new frame
      const std::string_view frame(name + sizeof fe::kDynamoGuards - 1);
      auto it = guards.find(frame);
      if (it == guards.end())
        it = guards.try_emplace(std::string(guards.size() < kMaxGuardFrames ? frame : "other"))
                 .first;
      it->second.add(duration_seconds(time, e));
    }
    return;
  }
  if (e.type == EventType::kCounter) {
    if (starts_with(name, fe::kCompilePhaseSeconds))  // totals; a label of a known few
      phase_seconds[known_or_other(name + std::strlen(fe::kCompilePhaseSeconds),
                                   fe::kCompilePhaseGroups)] = e.value;
    return;
  }
  if (e.type != EventType::kInstant) return;
  recompile_limit_hits += starts_with(name, fe::kRecompileLimitHit);
  if (formats::RecompileMark m; formats::parse_recompile_mark(name, &m)) {
    ++recompiles;
    ++recompile_reasons[formats::recompile_reason_class(m.reason)];
  }
  graph_breaks += starts_with(name, fe::kGraphBreak);
  eager_fallbacks += starts_with(name, fe::kEagerFallback);
  jax_cache_hits += std::strcmp(name, fe::kJaxCacheHit) == 0;
  jax_cache_misses += std::strcmp(name, fe::kJaxCacheMiss) == 0;
  if (formats::CacheMark mark; formats::parse_cache_mark(name, &mark)) {
    ++cache_lookups[{known_or_other(mark.layer, {"FX graph", "AOTAutograd"}), mark.hit ? "hit"
                                                                              : mark.bypass
                                                                                  ? "bypass"
                                                                                  : "miss"}];
  }
}

bool FrameworkMetrics::add(const Event& e, const TimeBase& time) {
  if (e.type == EventType::kGpu) return false;
  const Category category = e.site->category;
  const char* name = e.site->name;
  if (category == Category::kCompile) {
    add_compile(e, time);
  } else if (category == Category::kGc) {
    if (e.type == EventType::kRange && starts_with(name, fe::kGcGeneration)) {
      const int generation = std::atoi(name + std::strlen(fe::kGcGeneration));
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
  if (!recompile_reasons.empty()) {
    out->family("gpuprobe_compile_recompile_reasons_total", "counter",
                "torch.compile recompiles by the kind of guard that failed (size, stride, dtype, "
                "device, requires_grad, backend, object identity, type, length, value, other).");
    for (const auto& [reason, n] : recompile_reasons)
      out->sample("gpuprobe_compile_recompile_reasons_total", {{"reason", reason}},
                  static_cast<double>(n));
  }
  if (!cache_lookups.empty()) {
    out->family("gpuprobe_compile_cache_lookups_total", "counter",
                "torch.compile cache lookups by layer (FX graph, AOTAutograd) and outcome (hit, "
                "miss, bypass), from PyTorch's structured trace.");
    for (const auto& [key, n] : cache_lookups)
      out->sample("gpuprobe_compile_cache_lookups_total",
                  {{"layer", key.first}, {"outcome", key.second}}, static_cast<double>(n));
  }
  if (!phase_seconds.empty()) {
    out->family("gpuprobe_compile_phase_seconds_total", "counter",
                "torch.compile's own time per phase (Dynamo, AOTAutograd, Inductor, code "
                "generation, kernel compile) since the watcher opened.");
    for (const auto& [phase, seconds] : phase_seconds)
      out->sample("gpuprobe_compile_phase_seconds_total", {{"phase", phase}}, seconds);
  }
  if (!jax_phases.empty() || jax_cache_hits + jax_cache_misses > 0) {
    out->family("gpuprobe_jax_compile_duration_seconds", "histogram",
                "JAX compile phases (trace, lower, backend compile; cache load: a backend "
                "compile the persistent cache answered), gpuprobe.jax.watch_compile.");
    for (const auto& [phase, h] : jax_phases)
      h.write(out, "gpuprobe_jax_compile_duration_seconds", {{"phase", phase}});
    out->family("gpuprobe_jax_compilation_cache_lookups_total", "counter",
                "JAX persistent compilation cache lookups by outcome.");
    out->sample("gpuprobe_jax_compilation_cache_lookups_total", {{"outcome", "hit"}},
                static_cast<double>(jax_cache_hits));
    out->sample("gpuprobe_jax_compilation_cache_lookups_total", {{"outcome", "miss"}},
                static_cast<double>(jax_cache_misses));
  }
  if (triton_compiles.count + triton_loads.count > 0) {
    out->family("gpuprobe_triton_compile_duration_seconds", "histogram",
                "Triton JIT compiles of kernels (outcome compile), and loads of compiled kernels "
                "from Triton's cache (outcome cache load), gpuprobe.triton.watch_compile.");
    triton_compiles.write(out, "gpuprobe_triton_compile_duration_seconds",
                          {{"outcome", "compile"}});
    triton_loads.write(out, "gpuprobe_triton_compile_duration_seconds",
                       {{"outcome", "cache load"}});
  }
  if (!guards.empty()) {
    out->family("gpuprobe_compile_guard_seconds", "histogram",
                "Each compiled call's dispatch, by frame: torch.compile's wrapper to the call's "
                "first graph (Dynamo's guards, its recompile decision, the frame's prologue), "
                "gpuprobe.torch.watch_compile.");
    for (const auto& [frame, h] : guards)
      h.write(out, "gpuprobe_compile_guard_seconds", {{"frame", frame}});
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
