// The events gpuprobe's Python side records (formats/framework_events.h: gpuprobe.torch's compile
// watcher and allocator statistics, gpuprobe.watch_gc) as metrics of their own, with names a
// Prometheus user expects rather than per-compile range names: compile time and counts,
// recompiles (also by the kind of guard that failed), graph breaks, eager fallbacks, compile-cache
// hits and misses (also per layer), compile time per phase, compiled calls' guard time per frame,
// JAX's compiles per phase and its persistent cache's answers, GC pauses by generation, the CUDA
// caching allocator's bytes, retries and OOMs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "gpuprobe/trace_model.hpp"
#include "metrics/histogram.h"
#include "metrics/text_exposition.h"

namespace gpuprobe::metrics {

struct FrameworkMetrics {
  Histogram compiles;                  // torch.compile frame compiles
  std::map<int, Histogram> gc_pauses;  // by generation
  std::uint64_t recompiles = 0, graph_breaks = 0, eager_fallbacks = 0, recompile_limit_hits = 0;
  // by formats::recompile_reason_class(): a bounded set
  std::map<std::string, std::uint64_t> recompile_reasons;
  // Cache lookups by (layer, outcome): layers FX graph, AOTAutograd (else "other"); outcomes
  // hit, miss, bypass.
  std::map<std::pair<std::string, std::string>, std::uint64_t> cache_lookups;
  std::map<std::string, double> phase_seconds;  // torch.compile's own time per phase group
  std::map<std::string, Histogram> jax_phases;  // JAX's compile phases, by phase
  std::uint64_t jax_cache_hits = 0, jax_cache_misses = 0;
  Histogram triton_compiles, triton_loads;  // Triton's JIT compiles, and loads from its cache
  // Compiled calls' dispatch (Dynamo's guards), by frame ("[0] forward"): the first
  // kMaxGuardFrames frames seen have a label of their own, later ones "other".
  static constexpr std::size_t kMaxGuardFrames = 32;
  std::map<std::string, Histogram, std::less<>> guards;
  std::map<std::string, double> latest;  // the last value of each framework counter, by metric

  // Takes `e` when it is one of those events (true), else leaves it to the caller.
  bool add(const Event& e, const TimeBase& time);
  // Writes the families of the sources that produced anything: a program that never compiles
  // or collects has none of them.
  void write(TextExposition* out) const;

 private:
  void add_compile(const Event& e, const TimeBase& time);
};

}  // namespace gpuprobe::metrics
