#include "analysis/verdict.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_format.h"
#include "formats/compile_marks.h"

namespace gpuprobe::analysis {

namespace {

// Compile time's share of the trace.
double compile_share(const CompileResult& c) {
  return static_cast<double>(c.compile_ns) /
         static_cast<double>(std::max<std::int64_t>(c.compile_ns + c.base_ns, 1));
}

// Recompiles under this (torch's default recompile_limit) and no limit hit: few.
constexpr std::size_t kFewRecompiles = 8;

bool is_warmup(const CompileResult& c) {
  return c.limit_hits.empty() && c.recompiles.size() < kFewRecompiles &&
         c.after_last_compile >= 0.5;
}

// A jitter cause as the verdict names it.
std::string cause_words(const CauseOverlap& c) {
  const std::string& n = c.cause;
  std::string words = n == "gc pause"          ? "GC pauses"
                      : n == "compile"         ? "compiles"
                      : n == "allocator"       ? "allocator calls"
                      : n == "synchronization" ? "synchronizations"
                      : n == "large copy"      ? "large copies"
                      : n == "CPU gap"  ? "CPU gaps (outside recorded child ranges: uninstrumented "
                                          "code, a lock or the GIL)"
                      : n == "blocked"  ? "time blocked (a lock, I/O or sleep)"
                      : n == "GPU idle" ? "GPU idle time"
                                        : n;
  if (n == "gc pause" && !c.detail.empty()) words += " (" + c.detail + ")";
  return words;
}

// Whether some device ran work on more than one stream.
bool several_streams(const GpuIdleResult& r) {
  std::map<std::uint32_t, int> streams;
  for (const StreamStats& s : r.streams) {
    if (++streams[s.device] > 1) return true;
  }
  return false;
}

// The device's part: data loading, or what the GPU's time says.
std::string device_verdict(const GpuIdleResult& r, const KernelBoundsResult& b,
                           const DataLoadingResult& data, std::int64_t gpu_kernel_ns,
                           std::int64_t tiny_kernel_ns);

}  // namespace

std::string latency_verdict(const JitterResult& j) {
  if (j.outliers.empty() || j.cause_summary.empty() || j.excess_ns <= 0) return "";
  // Stalls, not the ordinary tail: above P99 (rather than a given threshold) they are named when
  // they last at least 3 times the median on average.
  const double mean_excess_ms = ms(j.excess_ns) / static_cast<double>(j.outliers.size());
  if (!j.threshold_given && mean_excess_ms < 2 * j.latency_p50_ms) return "";
  const CauseOverlap& top = *std::max_element(
      j.cause_summary.begin(), j.cause_summary.end(),
      [](const CauseOverlap& a, const CauseOverlap& b) { return a.explained_ns < b.explained_ns; });
  const double share = static_cast<double>(top.explained_ns) /
                       static_cast<double>(std::max<std::int64_t>(j.excess_ns, 1));
  const std::string over =
      j.threshold_given ? absl::StrFormat("over %.3f ms", j.outlier_threshold_ms)
                        : absl::StrFormat("over their P99 (%.3f ms)", j.outlier_threshold_ms);
  std::string v = absl::StrFormat(
      "latency outliers: %zu of %llu \"%s\" ranges %s, %.3f ms above the median in all",
      j.outliers.size(), static_cast<unsigned long long>(j.latency_count), j.latency_name, over,
      ms(j.excess_ns));
  if (share < 0.1) return v + ": no recorded cause explains them (see the jitter section)";
  return v + absl::StrFormat(", %.0f%% of it in %s", 100 * share, cause_words(top));
}

std::string compile_bound_verdict(const CompileResult& c) {
  const double share = compile_share(c);
  if (c.compiles == 0 || share < 0.5 || is_warmup(c)) return "";
  std::map<std::string, std::size_t> kinds;
  for (const std::string& r : c.recompiles) ++kinds[formats::recompile_reason_class(r)];
  std::string why =
      "the first compiles (no recompiles): a warm cache (TORCHINDUCTOR_CACHE_DIR, "
      "the FX graph cache) or a longer run amortises them";
  if (!kinds.empty()) {
    const auto top = std::max_element(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
      return a.second < b.second;
    });
    const std::string& kind = top->first;
    const std::string fix =
        kind == "size" || kind == "stride"
            ? "the input shapes drift: mark the changing dimension dynamic (torch.compile "
              "dynamic=None, torch._dynamo.mark_dynamic) or pad inputs to a few sizes"
        : kind == "dtype"   ? "the inputs change dtype: cast them before the compiled call"
        : kind == "backend" ? "a new torch.compile wrapper each time: compile once and reuse it"
                            : "see the recompile reasons below";
    why = absl::StrFormat("%zu recompiles, %zu of them %s guards: %s", c.recompiles.size(),
                          top->second, kind, fix);
  }
  const std::string limit =
      c.limit_hits.empty()
          ? ""
          : absl::StrFormat("; the recompile limit was hit %zu time%s and those frames run eagerly",
                            c.limit_hits.size(), c.limit_hits.size() == 1 ? "" : "s");
  return absl::StrFormat(
      "compile-bound: torch.compile compiled for %.0f%% of the trace (%llu "
      "compiles); %s%s",
      100 * share, static_cast<unsigned long long>(c.compiles), why, limit);
}

std::string compile_warmup_verdict(const CompileResult& c) {
  const double share = compile_share(c);
  if (c.compiles == 0 || share < 0.5 || !is_warmup(c)) return "";
  return absl::StrFormat(
      "compile warm-up, not compile-bound: %llu compiles (%zu recompile%s) took %.0f%% of the "
      "trace, then stopped: %.0f%% of %s came after the last one; a warm cache "
      "(TORCHINDUCTOR_CACHE_DIR, the FX graph cache) shortens start-up",
      static_cast<unsigned long long>(c.compiles), c.recompiles.size(),
      c.recompiles.size() == 1 ? "" : "s", 100 * share, 100 * c.after_last_compile,
      c.runs > 0 ? absl::StrFormat("the %llu runs of compiled code",
                                   static_cast<unsigned long long>(c.runs))
                 : std::string("the time outside compiles"));
}

std::string verdict(const GpuIdleResult& r, const KernelBoundsResult& b,
                    const DataLoadingResult& data, std::int64_t gpu_kernel_ns,
                    std::int64_t tiny_kernel_ns, const CompileResult* compile,
                    const JitterResult* jitter) {
  std::string v = jitter != nullptr ? latency_verdict(*jitter) : "";
  const auto then = [&v](const std::string& part) {
    return v.empty() ? part : part.empty() ? v : v + "; " + part;
  };
  if (compile != nullptr) {
    // A program that spends most of its time compiling is that, whatever its GPU did meanwhile.
    if (std::string bound = compile_bound_verdict(*compile); !bound.empty()) return then(bound);
    v = then(compile_warmup_verdict(*compile));
  }
  return then(device_verdict(r, b, data, gpu_kernel_ns, tiny_kernel_ns));
}

namespace {

std::string device_verdict(const GpuIdleResult& r, const KernelBoundsResult& b,
                           const DataLoadingResult& data, std::int64_t gpu_kernel_ns,
                           std::int64_t tiny_kernel_ns) {
  // First: a program waiting for its input looks CPU-bound (its GPU idles for host wait) or
  // like a CPU-only one, and neither fix helps it.
  if (data.batches > 0 && data.share >= 0.5) {
    return absl::StrFormat(
        "data-loading-bound: the %s wait for their next batch %.0f%% of the time (%llu "
        "batches, P50 %.3f ms, P99 %.3f ms each): more DataLoader workers (num_workers), "
        "pin_memory, a larger prefetch_factor, or a faster dataset",
        data.steps_ns > 0 ? "steps" : "program", 100 * data.share,
        static_cast<unsigned long long>(data.batches), data.p50_ms, data.p99_ms);
  }
  if (r.streams.empty()) return "CPU only: no GPU activity in this trace";
  std::int64_t host = 0, kernel = 0, other = 0;
  for (const StreamStats& s : r.streams) {
    host += s.host_wait_ns;
    kernel += s.kernel_wait_ns;
    other += s.other_idle_ns;
  }
  const std::int64_t idle = host + kernel + other;
  const double busy = r.busiest_percent();
  const auto share = [gpu_kernel_ns](std::int64_t ns) {
    return 100.0 * static_cast<double>(ns) / static_cast<double>(gpu_kernel_ns);
  };
  // Before CPU-bound: a host busy launching kernels too small to keep the GPU busy is the
  // "kernels too small" case, and its fix is fewer, larger kernels, not less host work.
  if (gpu_kernel_ns > 0 && r.tiny_kernel_ns * 2 > gpu_kernel_ns) {
    std::string launch;
    if (r.launch_call_p50_us > 0) {
      launch = absl::StrFormat(" against %.1f us to launch each (the median launch call)",
                               r.launch_call_p50_us);
    }
    const std::string waits =
        busy < 50 && idle > 0 && host * 2 > idle
            ? absl::StrFormat("; the GPU works %.0f%% of the time, waiting for the next launch",
                              busy)
            : "";
    return absl::StrFormat(
        "launch-bound (kernels too small): kernels under %.0f us take %.0f%% of GPU time; %.0f "
        "kernels a second, their median %.1f us on the GPU%s%s: fuse them (torch.compile) or "
        "capture them in CUDA graphs",
        static_cast<double>(tiny_kernel_ns) * 1e-3, share(r.tiny_kernel_ns), r.kernels_per_second,
        r.kernel_p50_us, launch, waits);
  }
  if (busy < 50 && idle > 0 && host * 2 > idle) {
    return absl::StrFormat(
        "CPU-bound: the busiest GPU works %.0f%% of the time and %.0f%% of the gaps "
        "between its kernels are host wait (the CPU had not launched the next kernel "
        "yet): move work off the launching thread, batch more, or use CUDA graphs",
        busy, 100.0 * static_cast<double>(host) / static_cast<double>(idle));
  }
  // A mostly idle device with several streams whose gaps are not host wait: the next kernel
  // was queued and the stream waited, for another stream's work (an event, a stream wait) or
  // for launch overhead between queued work. Not GPU-bound (the GPU is mostly idle), not
  // CPU-bound (the host was ahead).
  if (busy < 50 && idle > 0 && (kernel + other) * 2 > idle && several_streams(r)) {
    // What the longest waits ended behind: the other stream's work, not another waiter.
    const WaitedBehind* most = nullptr;
    const StreamStats* waiting = nullptr;
    for (const StreamStats& s : r.streams) {
      for (const WaitedBehind& w : s.waited_behind) {
        if (most == nullptr || w.wait_ns > most->wait_ns) {
          most = &w;
          waiting = &s;
        }
      }
    }
    const std::string behind =
        most != nullptr && most->wait_ns * 5 >= other
            ? absl::StrFormat(
                  "; stream %u waited longest behind %s on stream %u (%.3f ms, %llu "
                  "waits)",
                  waiting->stream, most->name, most->stream, ms(most->wait_ns),
                  static_cast<unsigned long long>(most->waits))
            : "";
    return absl::StrFormat(
        "GPU waits on its other streams most of its idle time: the busiest GPU works %.0f%% of "
        "the time and %.0f%% of the gaps between its kernels came with the next kernel already "
        "launched (%.3f ms of waits over 30 us, %.3f ms of shorter ones; host wait only "
        "%.0f%%)%s: look at the cross-stream dependencies (events, stream waits, "
        "synchronizations) and overlap the streams' work",
        busy, 100.0 * static_cast<double>(kernel + other) / static_cast<double>(idle), ms(other),
        ms(kernel), 100.0 * static_cast<double>(host) / static_cast<double>(idle), behind);
  }
  if (b.communication_class_ns * 2 > gpu_kernel_ns) {
    return absl::StrFormat(
        "communication-bound: %.0f%% of kernel time is collectives (NCCL, by name): "
        "overlap them with compute (DDP bucket sizes, FSDP prefetch), or look for a "
        "straggler rank the others wait for",
        share(b.communication_class_ns));
  }
  if (b.memory_class_ns * 2 > gpu_kernel_ns) {
    return absl::StrFormat(
        "GPU-bound, mostly memory-bound kernels: the busiest GPU works %.0f%% of the "
        "time and %.0f%% of kernel time is elementwise, reduction, norm or copy "
        "kernels (by name): fuse them (torch.compile) to cut memory traffic",
        busy, share(b.memory_class_ns));
  }
  if (b.compute_class_ns * 2 > gpu_kernel_ns) {
    return absl::StrFormat(
        "GPU-bound, mostly compute-bound kernels: the busiest GPU works %.0f%% of the "
        "time and %.0f%% of kernel time is GEMM, convolution or attention (by name): "
        "check that they use tensor cores (TF32, bf16/fp16) and good shapes",
        busy, share(b.compute_class_ns));
  }
  return absl::StrFormat(
      "GPU-bound: the busiest GPU works %.0f%% of the time; look at the top kernels", busy);
}

}  // namespace

}  // namespace gpuprobe::analysis
