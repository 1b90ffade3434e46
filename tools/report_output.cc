#include "tools/report_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "formats/framework_events.h"

namespace gpuprobe::tools {
namespace {

using analysis::NameStats;
namespace fe = formats::framework_events;

// What the allocator did within an outlier and its state then, when there is anything to say.
void print_outlier_memory(std::FILE* o, const analysis::OutlierMemory& m) {
  if (m.state.at_ns == 0 && m.malloc_calls == 0 && m.free_calls == 0) return;
  std::fprintf(o, "    allocator: %llu cudaMalloc, %llu cudaFree, %.0f retries within it",
               static_cast<unsigned long long>(m.malloc_calls),
               static_cast<unsigned long long>(m.free_calls), m.retries);
  if (m.state.fragmentation() >= 0) {
    std::fprintf(o, "; reserved %.1f MiB, %.0f%% of it not allocated", m.state.reserved / (1 << 20),
                 100 * m.state.fragmentation());
  }
  std::fputc('\n', o);
}

// An outlier's deviating ranges, indented by their depth: what took longer than its own median.
void print_deviations(std::FILE* o, const std::vector<analysis::Deviation>& ds, std::int64_t excess,
                      int indent) {
  for (const analysis::Deviation& d : ds) {
    std::fprintf(
        o, "%*s%s %.3f ms (its median %.3f ms): +%.3f ms, %.0f%% of the excess\n", 2 * indent, "",
        d.name.c_str(), analysis::ms(d.duration_ns), analysis::ms(d.median_ns),
        analysis::ms(d.excess_ns),
        excess > 0 ? 100.0 * static_cast<double>(d.excess_ns) / static_cast<double>(excess) : 0.0);
    print_deviations(o, d.children, excess, indent + 1);
  }
}

std::vector<const NameStats*> sorted(std::vector<const NameStats*> rows, const std::string& by) {
  const auto key = [&](const NameStats* s) -> double {
    if (by == "calls") return static_cast<double>(s->count);
    if (by == "mean") return static_cast<double>(s->total_ns) / static_cast<double>(s->count);
    if (by == "max") return static_cast<double>(s->max_ns);
    if (by == "p99") return s->quantile_ns(0.99);
    return static_cast<double>(s->total_ns);
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const NameStats* a, const NameStats* b) { return key(a) > key(b); });
  return rows;
}

std::string clip(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

void name_table(std::FILE* o, const char* title, const std::vector<const NameStats*>& rows,
                std::int64_t gpu_total, bool ranges, const TextOptions& opt) {
  if (rows.empty()) return;
  std::fprintf(o, "\n%s (%zu names, sorted by %s)\n", title, rows.size(), opt.sort.c_str());
  std::fprintf(o, "  %-40s %8s %11s %10s %10s %10s %10s %10s %7s%s\n", "name", "calls", "total ms",
               "mean ms", "min ms", "max ms", "p50 ms", "p99 ms", ranges ? "self ms" : "% GPU",
               ranges ? " GPU ms (launched)" : "");
  std::size_t n = 0;
  for (const NameStats* s : sorted(rows, opt.sort)) {
    if (n++ == opt.limit) break;
    std::fprintf(o, "  %-40s %8llu %11.3f %10.4f %10.4f %10.4f %10.4f %10.4f",
                 clip(s->name, 40).c_str(), static_cast<unsigned long long>(s->count),
                 ms(s->total_ns), ms(s->total_ns) / static_cast<double>(s->count), ms(s->min_ns),
                 ms(s->max_ns), s->quantile_ns(0.5) * 1e-6, s->quantile_ns(0.99) * 1e-6);
    if (ranges) {
      std::fprintf(o, " %7.1f %17.3f\n", ms(s->self_ns), ms(s->gpu_ns));
    } else {
      std::fprintf(o, " %6.1f%%\n",
                   gpu_total > 0
                       ? 100.0 * static_cast<double>(s->total_ns) / static_cast<double>(gpu_total)
                       : 0.0);
    }
  }
}

// compare_modes()'s table: per torch.compile mode, what it cost and what it gained.
void print_modes(const std::vector<analysis::CompileResult::ModeRow>& modes, std::FILE* o) {
  // The columns and their headings are formats::framework_events::kModeColumns'; "passed" is said
  // after the row instead.
  const auto get = [](const analysis::CompileResult::ModeRow& m, const fe::ModeColumn& c) {
    const auto it = m.values.find(c.mark);
    return it == m.values.end() || (c.negative_unknown && it->second < 0) ? std::nan("")
                                                                          : it->second * c.scale;
  };
  const auto shown = [](const fe::ModeColumn& c) { return std::string_view(c.key) != "passed"; };
  // A column as wide as its heading, and at least a number's width.
  const auto width = [](const fe::ModeColumn& c) {
    return std::max(static_cast<int>(std::strlen(c.heading)), 8);
  };
  std::fprintf(o, "  modes (compare_modes): %-16s", "mode");
  for (const fe::ModeColumn& c : fe::kModeColumns) {
    if (shown(c)) std::fprintf(o, "  %*s", width(c), c.heading);
  }
  std::fputc('\n', o);
  const fe::ModeColumn& passed = *fe::mode_column("passed");
  for (const auto& m : modes) {
    std::fprintf(o, "                         %-16s", clip(m.mode, 16).c_str());
    for (const fe::ModeColumn& c : fe::kModeColumns) {
      if (!shown(c)) continue;
      const double v = get(m, c);
      const std::string_view key = c.key;
      char cell[32];
      if (std::isnan(v)) {
        std::snprintf(cell, sizeof cell, "%s", key == "break_even_calls" ? "never" : "-");
      } else if (key == "break_even_calls" || key == "graph_breaks" || key == "compiles") {
        std::snprintf(cell, sizeof cell, "%.0f", std::ceil(v));
      } else if (key == "max_abs_error") {
        std::snprintf(cell, sizeof cell, "%.3g", v);
      } else {
        std::snprintf(cell, sizeof cell,
                      key == "execute_ms" ? "%.4f"
                      : key == "speedup"  ? "%.2f"
                                          : "%.3f",
                      v);
      }
      std::fprintf(o, "  %*s", width(c), cell);
    }
    std::fprintf(o, "%s\n", get(m, passed) == 0 ? "  (outside the tolerance)" : "");
  }
}

// Each device's active span (first to last GPU work): idle, compute and non-compute shares as
// HTA's temporal breakdown, and the communication that overlaps compute.
void print_breakdown(const analysis::GpuBreakdownResult& b, std::FILE* o) {
  for (const analysis::DeviceBreakdown& d : b.devices) {
    std::fprintf(o,
                 "  GPU %u: active span %.3f ms (first to last GPU work): idle %.1f%%, compute "
                 "%.1f%%, non-compute (communication, copies, sets) %.1f%%\n",
                 d.device, ms(d.span_ns()), d.percent_of_span(d.idle_ns()),
                 d.percent_of_span(d.compute_ns), d.percent_of_span(d.non_compute_ns()));
    if (d.communication_ns > 0) {
      std::fprintf(o,
                   "  GPU %u: communication-computation overlap %.1f%% of %.3f ms of "
                   "communication kernels\n",
                   d.device, d.overlap_percent(), ms(d.communication_ns));
    } else {
      std::fprintf(o, "  GPU %u: no communication kernels (no overlap figure)\n", d.device);
    }
  }
}

// Sets (memsets) per device, beside the copies: memory time is copies and sets.
void print_memsets(const analysis::GpuBreakdownResult& b, std::FILE* o) {
  bool any = false;
  for (const analysis::DeviceBreakdown& d : b.devices) any = any || d.memsets > 0;
  if (!any) return;
  std::fprintf(o, "\nmemsets\n  %-8s %8s %14s %10s %18s\n", "device", "sets", "bytes", "ms",
               "memory ms (+copies)");
  for (const analysis::DeviceBreakdown& d : b.devices) {
    if (d.memsets == 0) continue;
    std::fprintf(o, "  GPU %-4u %8llu %14llu %10.3f %18.3f\n", d.device,
                 static_cast<unsigned long long>(d.memsets),
                 static_cast<unsigned long long>(d.memset_bytes), ms(d.memset_ns),
                 ms(d.memory_ns()));
  }
}

}  // namespace

void print_report(const analysis::ReportResult& r, const TextOptions& opt, std::FILE* o) {
  std::fprintf(o, "trace: %.3f ms, %llu events", ms(r.end_ns - r.start_ns),
               static_cast<unsigned long long>(r.events));
  if (r.dropped + r.gpu_dropped != 0)
    std::fprintf(o, " (dropped while recording: %llu events, %llu GPU records)",
                 static_cast<unsigned long long>(r.dropped),
                 static_cast<unsigned long long>(r.gpu_dropped));
  if (r.names_overflowed != 0)
    std::fprintf(o, " (%llu names past a cap, shown as \"<...>\")",
                 static_cast<unsigned long long>(r.names_overflowed));
  std::fprintf(o, "\nverdict: %s\n", r.verdict.c_str());
  // A frame that silently ran eagerly looks like a compile that worked: say so first.
  if (!r.compile.fallbacks.empty()) {
    std::fprintf(o,
                 "EAGER FALLBACK: %zu torch.compile frame%s failed to compile and ran eagerly:\n",
                 r.compile.fallbacks.size(), r.compile.fallbacks.size() == 1 ? "" : "s");
    for (const std::string& f : r.compile.fallbacks) std::fprintf(o, "  %s\n", f.c_str());
  }

  name_table(o, "GPU kernels", r.names.kernels, r.names.gpu_kernel_ns, false, opt);
  name_table(o, "ranges", r.names.ranges, r.names.gpu_kernel_ns, true, opt);

  if (!r.gpu.streams.empty()) {
    std::fprintf(o, "\nGPU utilisation\n");
    if (r.gpu.sampled) {
      std::fprintf(o, "  GPU activity sampled (gpu_burst=): %.3f s recorded in bursts\n",
                   static_cast<double>(r.gpu.recorded_ns) / 1e9);
    }
    for (const auto& [device, busy] : r.gpu.device_busy_percent)
      std::fprintf(o, "  GPU %u: busy %.1f%% of the %s\n", device, busy,
                   r.gpu.sampled ? "time recorded" : "trace");
    print_breakdown(r.breakdown, o);
    std::fprintf(o, "  %-16s %8s %7s %10s %8s %14s %14s %14s\n", "stream", "kernels", "copies",
                 "busy ms", "busy %", "host wait ms", "kernel wait ms", "other idle ms");
    for (const analysis::StreamStats& s : r.gpu.streams) {
      const double window = ms(s.last_ns - s.first_ns);
      char name[32];
      std::snprintf(name, sizeof name, "GPU %u stream %u", s.device, s.stream);
      std::fprintf(o, "  %-16s %8llu %7llu %10.3f %7.1f%% %14.3f %14.3f %14.3f\n", name,
                   static_cast<unsigned long long>(s.kernels),
                   static_cast<unsigned long long>(s.copies), ms(s.busy_ns),
                   window > 0 ? 100.0 * ms(s.busy_ns) / window : 100.0, ms(s.host_wait_ns),
                   ms(s.kernel_wait_ns), ms(s.other_idle_ns));
      for (const analysis::WaitedBehind& w : s.waited_behind) {
        std::fprintf(o, "    waited behind %s on stream %u: %.3f ms, %llu waits\n", w.name.c_str(),
                     w.stream, ms(w.wait_ns), static_cast<unsigned long long>(w.waits));
      }
    }
    if (r.gpu.launches > 0) {
      std::fprintf(o,
                   "  launch delay (kernel start - launch call end): p50 %.1f us, p99 %.1f us, max "
                   "%.1f us over %llu launches\n",
                   r.gpu.launch_delay_p50_us, r.gpu.launch_delay_p99_us, r.gpu.launch_delay_max_us,
                   static_cast<unsigned long long>(r.gpu.launches));
    }
    std::fprintf(o, "  tiny kernels (< 10 us): %llu, %.1f%% of GPU kernel time%s\n",
                 static_cast<unsigned long long>(r.gpu.tiny_kernels),
                 r.names.gpu_kernel_ns > 0 ? 100.0 * static_cast<double>(r.gpu.tiny_kernel_ns) /
                                                 static_cast<double>(r.names.gpu_kernel_ns)
                                           : 0.0,
                 r.gpu.tiny_kernels > 0
                     ? " -- fuse them (torch.compile) or replay them as a CUDA graph"
                     : "");
  }

  if (r.names.gpu_kernel_ns > 0) {
    const auto share = [&](std::int64_t ns) {
      return 100.0 * static_cast<double>(ns) / static_cast<double>(r.names.gpu_kernel_ns);
    };
    std::fprintf(o,
                 "\nkernel time by what likely bounds it (from names): compute (GEMM, conv, "
                 "attention) %.1f%%, memory (elementwise, reductions, norms, copies) %.1f%%, "
                 "communication %.1f%%, unclassified %.1f%%\n",
                 share(r.bounds.compute_class_ns), share(r.bounds.memory_class_ns),
                 share(r.bounds.communication_class_ns), share(r.bounds.unclassified_ns));
  }
  if (!r.bounds.roofline.empty()) {
    std::fprintf(o, "\nroofline (kernels with declared bytes and FLOPs%s)\n",
                 r.bounds.peaks.memory_gbps > 0 ? "" : "; device peaks unknown");
    std::fprintf(o, "  %-40s %12s %10s %10s %9s %8s\n", "name", "FLOP/byte", "GB/s", "TFLOP/s",
                 "bound", "% peak");
    for (const analysis::RooflineRow& k : r.bounds.roofline) {
      std::fprintf(o, "  %-40s %12.2f %10.1f %10.3f %9s %7.1f%%\n", clip(k.name, 40).c_str(),
                   k.intensity, k.achieved_gbps, k.achieved_tflops,
                   k.bound.empty() ? "?" : k.bound.c_str(), k.percent_of_peak);
    }
  }
  if (!r.bounds.copies.empty()) {
    std::fprintf(o, "\ncopies\n  %-8s %8s %14s %10s %10s %10s\n", "kind", "copies", "bytes", "ms",
                 "GB/s", "of peak");
    for (const analysis::CopyRow& c : r.bounds.copies) {
      std::fprintf(o, "  %-8s %8llu %14llu %10.3f %10.2f", c.kind.c_str(),
                   static_cast<unsigned long long>(c.copies),
                   static_cast<unsigned long long>(c.bytes), ms(c.ns), c.achieved_gbps);
      if (c.peak_gbps > 0) {
        std::fprintf(o, " %9.1f%%\n", 100 * c.achieved_gbps / c.peak_gbps);
      } else {
        std::fprintf(o, " %10s\n", "-");
      }
    }
  }
  print_memsets(r.breakdown, o);
  if (!r.latency.empty()) {
    std::fprintf(o, "\nlatency by range name\n  %-40s %8s %10s %10s %10s %10s %10s\n", "name",
                 "count", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms");
    std::size_t n = 0;
    for (const analysis::LatencyRow& l : r.latency) {
      if (n++ == opt.limit) break;
      std::fprintf(o, "  %-40s %8llu %10.4f %10.4f %10.4f %10.4f %10.4f\n",
                   clip(l.name, 40).c_str(), static_cast<unsigned long long>(l.count), l.p50_ms,
                   l.p90_ms, l.p99_ms, l.p999_ms, l.max_ms);
    }
  }
  if (r.compile.compiles > 0 || !r.compile.recompiles.empty() || !r.compile.graph_breaks.empty() ||
      !r.compile.fallbacks.empty() || !r.compile.limit_hits.empty() ||
      !r.compile.restarts.empty()) {
    const analysis::CompileResult& c = r.compile;
    std::fprintf(
        o, "\ntorch.compile: %llu compiles, T_compile %.3f ms (%.1f%% of the trace)",
        static_cast<unsigned long long>(c.compiles), ms(c.compile_ns),
        r.end_ns > r.start_ns ? 100.0 * ms(c.compile_ns) / ms(r.end_ns - r.start_ns) : 0.0);
    if (c.steps > 0)
      std::fprintf(o, ", amortised over %llu steps: %.3f ms per step",
                   static_cast<unsigned long long>(c.steps),
                   ms(c.compile_ns) / static_cast<double>(c.steps));
    std::fprintf(o, "\n");
    if (c.runs > 0) {
      std::fprintf(
          o,
          "  compiled code ran m = %llu times: T_execute %.3f ms, p = T_execute / (trace - "
          "T_compile) = %.3f / %.3f ms = %.1f%%\n  amortised compile cost B = T_compile / m = "
          "%.3f ms per run\n",
          static_cast<unsigned long long>(c.runs), ms(c.run_ns), ms(c.run_ns), ms(c.base_ns),
          100 * c.share, c.amortised_ms);
      if (c.amdahl_bound > 0)
        std::fprintf(o,
                     "  Amdahl: the other %.1f%% (eager code, graph breaks, data, waits) caps the "
                     "gain from faster compiled code at %.2fx\n",
                     100 * (1 - c.share), c.amdahl_bound);
    }
    if (c.cache_hits >= 0 && c.cache_hits + c.cache_misses > 0)
      std::fprintf(o, "  cache: %.0f hits, %.0f misses (%.0f%% hit rate)\n", c.cache_hits,
                   c.cache_misses, 100 * c.cache_hits / (c.cache_hits + c.cache_misses));
    // Where the compile time went, by phase group, in the order a compile goes through them.
    if (!c.phase_seconds.empty()) {
      double total = 0;
      for (const auto& [group, seconds] : c.phase_seconds) total += seconds;
      std::fprintf(o, "  phases (own time, %.3f ms in all):", total * 1e3);
      for (const char* group :
           {"Dynamo", "AOTAutograd", "Inductor", "code generation", "kernel compile"}) {
        const auto it = c.phase_seconds.find(group);
        if (it == c.phase_seconds.end()) continue;
        std::fprintf(o, " %s %.3f ms (%.0f%%)", group, it->second * 1e3,
                     total > 0 ? 100 * it->second / total : 0.0);
      }
      std::fputc('\n', o);
    }
    // Per layer, each miss with the key components that changed since the frame's last compile.
    for (const auto& [name, layer] : c.cache_layers) {
      std::fprintf(o, "  %s cache: %llu hits, %llu misses", name.c_str(),
                   static_cast<unsigned long long>(layer.hits),
                   static_cast<unsigned long long>(layer.misses));
      if (layer.bypasses > 0)
        std::fprintf(o, ", %llu bypassed", static_cast<unsigned long long>(layer.bypasses));
      std::fputc('\n', o);
      for (const auto& miss : layer.explained)
        std::fprintf(o, "    %s: %s\n", miss.compile_id.c_str(), miss.what.c_str());
    }
    if (c.graph_ops > 0 && c.kernels_generated > 0)
      std::fprintf(o, "  ops per generated kernel K = %.1f (%.0f FX ops, %.0f kernels)\n",
                   c.graph_ops / c.kernels_generated, c.graph_ops, c.kernels_generated);
    // The code each compile generated: a slow kernel of the trace leads to its source.
    for (const auto& m : c.generated) {
      std::fprintf(o, "  generated by %s: %s (%zu kernels", m.compile_id.c_str(), m.path.c_str(),
                   m.kernels.size());
      if (m.graph_runs >= 0)
        std::fprintf(o, "; its graph ran %lld times", static_cast<long long>(m.graph_runs));
      if (m.kernel_runs > 0) {
        std::fprintf(o, "; in this trace its kernels ran %llu times, %.3f ms on the GPU",
                     static_cast<unsigned long long>(m.kernel_runs), ms(m.kernel_gpu_ns));
      }
      std::fprintf(o, ")\n");
    }
    if (c.speedup > 0)
      std::fprintf(o, "  speedup S = T_eager / T_compiled = %.2f (from compare())\n", c.speedup);
    if (c.program_speedup > 0)
      std::fprintf(o, "  whole program vs eager: (1 - p) + p S = %.2fx\n", c.program_speedup);
    if (c.break_even_runs > 0)
      std::fprintf(o, "  the compiles pay for themselves after %.0f runs (%llu so far)\n",
                   c.break_even_runs, static_cast<unsigned long long>(c.runs));
    if (!c.modes.empty()) print_modes(c.modes, o);
    std::fprintf(o, "  recompiles: %zu\n", c.recompiles.size());
    for (const std::string& reason : c.recompiles) std::fprintf(o, "    %s\n", reason.c_str());
    if (!c.limit_hits.empty()) {
      std::fprintf(o, "  recompile limit hit %zu time%s (those frames run eagerly from then on)\n",
                   c.limit_hits.size(), c.limit_hits.size() == 1 ? "" : "s");
      for (const std::string& hit : c.limit_hits) std::fprintf(o, "    %s\n", hit.c_str());
    }
    if (!c.fallbacks.empty())
      std::fprintf(o, "  eager fallbacks: %zu (listed under the verdict)\n", c.fallbacks.size());
    std::fprintf(o, "  restarts (Dynamo analysed a frame again): %zu\n", c.restarts.size());
    for (const std::string& restart : c.restarts) std::fprintf(o, "    %s\n", restart.c_str());
    std::uint64_t breaks = 0;
    for (const auto& [reason, n] : c.graph_breaks) breaks += n;
    std::fprintf(o, "  graph breaks: %llu, %zu distinct\n", static_cast<unsigned long long>(breaks),
                 c.graph_breaks.size());
    for (const auto& [reason, n] : c.graph_breaks)
      std::fprintf(o, "    %llux %s\n", static_cast<unsigned long long>(n), reason.c_str());
    if (const analysis::CompileResult::BreakCost& b = c.break_cost; b.returns > 0) {
      std::fprintf(o,
                   "  graph breaks at run time: T_overhead = N_break x T_fallback = %llu x %.3f ms "
                   "= %.3f ms of eager code between compiled graphs (median %.3f ms; %.1f%% of "
                   "the compiled code's time with it)\n",
                   static_cast<unsigned long long>(b.returns), b.fallback_ms, ms(b.overhead_ns),
                   ms(b.median_ns), 100.0 * b.share);
    }
  }
  if (const analysis::CompileResult::Jax& jax = r.compile.jax;
      jax.compiles + jax.loads + jax.cache_hits + jax.cache_misses > 0) {
    double compile_s = 0;
    for (const auto& [phase, s] : jax.phase_seconds)
      compile_s += phase == fe::kJaxCacheLoad ? 0 : s;
    std::fprintf(o, "\nJAX: %llu compiles, %.3f ms compiling",
                 static_cast<unsigned long long>(jax.compiles), compile_s * 1e3);
    for (const char* phase : fe::kJaxPhases) {
      const auto it = jax.phase_seconds.find(phase);
      if (it != jax.phase_seconds.end()) std::fprintf(o, "; %s %.3f ms", phase, it->second * 1e3);
    }
    std::fprintf(o, "\n  persistent cache: %llu hits (%llu loads), %llu misses\n",
                 static_cast<unsigned long long>(jax.cache_hits),
                 static_cast<unsigned long long>(jax.loads),
                 static_cast<unsigned long long>(jax.cache_misses));
  }
  if (const analysis::CompileResult::Triton& t = r.compile.triton; t.compiles + t.loads > 0) {
    std::fprintf(o, "\nTriton: %llu kernel compiles, %.3f ms; %llu loads from its cache, %.3f ms\n",
                 static_cast<unsigned long long>(t.compiles), t.compile_seconds * 1e3,
                 static_cast<unsigned long long>(t.loads), t.load_seconds * 1e3);
    if (!t.stage_seconds.empty()) {
      std::fprintf(o, "  stages:");
      for (const char* stage : {"ir", "ttir", "ttgir", "llir", "ptx", "cubin", "store"}) {
        const auto it = t.stage_seconds.find(stage);
        if (it != t.stage_seconds.end()) std::fprintf(o, " %s %.3f ms", stage, it->second * 1e3);
      }
      std::fputc('\n', o);
    }
  }
  if (r.memory.samples > 0 || r.memory.malloc_calls > 0) {
    const analysis::MemoryResult& m = r.memory;
    std::fprintf(o,
                 "\nmemory: %llu allocator samples; reserved at most %.1f MiB, allocated %.1f MiB",
                 static_cast<unsigned long long>(m.samples), m.max_reserved / (1 << 20),
                 m.max_allocated / (1 << 20));
    if (m.fragmentation_p50 >= 0) {
      std::fprintf(
          o, "; reserved but not allocated: median %.0f%%, at most %.0f%%, at the end %.0f%%",
          100 * m.fragmentation_p50, 100 * m.fragmentation_max, 100 * m.fragmentation_last);
    }
    std::fprintf(o, "; %llu cudaMalloc, %llu cudaFree calls, %.0f alloc retries\n",
                 static_cast<unsigned long long>(m.malloc_calls),
                 static_cast<unsigned long long>(m.free_calls), m.retries);
  }
  if (r.data.batches > 0) {
    std::fprintf(o,
                 "\ndata loading: %llu batches, %.3f ms waiting for them (%.0f%% of the %s "
                 "time); per batch P50 %.3f ms, P99 %.3f ms, max %.3f ms\n",
                 static_cast<unsigned long long>(r.data.batches), ms(r.data.wait_ns),
                 100 * r.data.share, r.data.steps_ns > 0 ? "steps'" : "trace's", r.data.p50_ms,
                 r.data.p99_ms, r.data.max_ms);
  }
  if (r.jitter.latency_name.empty() && !r.names.ranges.empty()) {
    std::fprintf(o, "\njitter: no range explained: %s\n", r.jitter.latency_reason.c_str());
  }
  if (!r.jitter.latency_name.empty()) {
    std::fprintf(o, "\njitter: %zu outliers of \"%s\" above %.3f ms\n", r.jitter.outliers.size(),
                 r.jitter.latency_name.c_str(), r.jitter.outlier_threshold_ms);
    std::fprintf(o, "  why \"%s\": %s\n", r.jitter.latency_name.c_str(),
                 r.jitter.latency_reason.c_str());
    if (r.jitter.outliers.empty() && r.jitter.latency_count < 100)
      std::fprintf(o,
                   "  (of %llu instances the P99 is the slowest itself: --threshold-ms MS sets "
                   "the bar)\n",
                   static_cast<unsigned long long>(r.jitter.latency_count));
    std::size_t n = 0;
    for (const analysis::Outlier& out : r.jitter.outliers) {
      if (n++ == opt.limit) break;
      std::fprintf(o, "  %9.3f ms at +%.3f ms (%s):", ms(out.duration_ns),
                   ms(out.begin_ns - r.start_ns), out.thread.c_str());
      if (out.causes.empty() && out.children.empty())
        std::fprintf(o, " nothing recorded overlaps it");
      for (const analysis::CauseOverlap& c : out.causes)
        std::fprintf(o, "  %s %.3f ms", c.cause.c_str(), ms(c.overlap_ns));
      std::fputc('\n', o);
      for (const analysis::CauseOverlap& c : out.causes) {
        if (!c.detail.empty()) std::fprintf(o, "    %s: %s\n", c.cause.c_str(), c.detail.c_str());
      }
      print_deviations(o, out.children, out.excess_ns, 2);
      if (n - 1 < r.memory.outliers.size()) print_outlier_memory(o, r.memory.outliers[n - 1]);
    }
    if (!r.jitter.cause_summary.empty()) {
      // Each cause's share of the outliers' time above their median: causes can overlap one
      // another (a compile inside a CPU gap), so the shares need not add up to 100 %.
      std::fprintf(o,
                   "  across outliers (%.3f ms above the median in all):", ms(r.jitter.excess_ns));
      for (const analysis::CauseOverlap& c : r.jitter.cause_summary) {
        std::fprintf(o, "  %s %.3f ms (%llu) %.0f%%", c.cause.c_str(), ms(c.overlap_ns),
                     static_cast<unsigned long long>(c.events),
                     r.jitter.excess_ns > 0 ? 100.0 * static_cast<double>(c.explained_ns) /
                                                  static_cast<double>(r.jitter.excess_ns)
                                            : 0.0);
      }
      std::fputc('\n', o);
    }
  }
}

}  // namespace gpuprobe::tools
