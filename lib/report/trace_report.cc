#include "report/trace_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "formats/kineto.h"
#include "formats/steps.h"
#include "formats/torch_events.h"

namespace gpuprobe::report {
namespace {

namespace te = formats::torch_events;

constexpr const char* kCauseNames[] = {"gc pause", "compile", "allocator", "synchronization",
                                       "large copy"};

bool contains(const char* s, const char* part) { return std::strstr(s, part) != nullptr; }

// Sorted, overlapping intervals merged: their union.
template <class Interval>
void merge(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::size_t out = 0;
  for (const Interval& i : v) {
    if (out > 0 && i.begin <= v[out - 1].end) {
      v[out - 1].end = std::max(v[out - 1].end, i.end);
    } else {
      v[out++] = i;
    }
  }
  v.resize(out);
}

// How much of [begin, end) merged, sorted `v` covers, and how many of its intervals touch it.
template <class Interval>
std::pair<std::int64_t, std::uint64_t> overlap(const std::vector<Interval>& v, std::int64_t begin,
                                               std::int64_t end) {
  auto it = std::lower_bound(v.begin(), v.end(), begin,
                             [](const Interval& i, std::int64_t t) { return i.end <= t; });
  std::int64_t covered = 0;
  std::uint64_t n = 0;
  for (; it != v.end() && it->begin < end; ++it) {
    covered += std::min(end, it->end) - std::max(begin, it->begin);
    ++n;
  }
  return {covered, n};
}

}  // namespace

DevicePeaks device_peaks(const std::string& name) {
  // NVIDIA's datasheet figures (SXM parts): FP32 non-tensor TFLOP/s, HBM GB/s, PCIe per direction.
  struct Known {
    const char* part;
    DevicePeaks peaks;
  };
  static const Known kKnown[] = {{"H200", {67, 4800, 64}},   {"H100", {67, 3350, 64}},
                                 {"A100", {19.5, 2039, 32}}, {"L40S", {91.6, 864, 32}},
                                 {"L4", {30.3, 300, 32}},    {"V100", {15.7, 900, 16}}};
  for (const Known& k : kKnown) {
    if (name.find(k.part) != std::string::npos) return k.peaks;
  }
  return {};
}

std::string kernel_class_from_name(const std::string& name) {
  std::string lower(name.size(), ' ');
  std::transform(name.begin(), name.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto any = [&](std::initializer_list<const char*> parts) {
    for (const char* p : parts) {
      if (lower.find(p) != std::string::npos) return true;
    }
    return false;
  };
  if (any({"nccl", "rccl", "gloo:", "allreduce", "all_reduce", "allgather", "all_gather",
           "reducescatter", "reduce_scatter", "alltoall", "all_to_all", "sendrecv"}))
    return "communication";
  // Matrix-vector products stream their matrix once: memory-bound, though named like GEMMs;
  // type conversions are named like convolutions.
  if (any({"gemv", "convert"})) return "memory";
  if (any({"gemm", "xmma", "wgmma", "hgmma", "cutlass", "cublas", "conv", "flash", "fmha",
           "attention", "sdpa", "triton_tem", "matmul", "_mma"}))
    return "compute";
  if (any({"elementwise", "vectorized", "reduce",  "reduction", "triton_poi", "triton_red",
           "triton_per",  "copy",       "memcpy",  "fill",      "cat_",       "catarray",
           "index",       "gather",     "scatter", "softmax",   "norm",       "transpose",
           "embedding",   "adam",       "sgd",     "foreach",   "dropout",    "where",
           "sum",         "mean",       "cast"}))
    return "memory";
  return "";
}

void NameStats::add(std::int64_t begin, std::int64_t end, std::uint32_t thread, std::size_t keep,
                    std::int64_t self) {
  const std::int64_t d = end - begin;
  ++count;
  total_ns += d;
  min_ns = std::min(min_ns, d);
  max_ns = std::max(max_ns, d);
  histogram->add(d);
  if (self >= 0) {
    self_ns += self;
    if (!self_histogram) self_histogram = std::make_unique<LogHistogram>();
    self_histogram->add(self);
  }
  const auto longer = [](const Instance& a, const Instance& b) {
    return a.end - a.begin > b.end - b.begin;
  };
  if (slowest.size() < keep) {
    slowest.push_back({begin, end, thread, self});
    std::push_heap(slowest.begin(), slowest.end(), longer);
  } else if (keep > 0 && d > slowest.front().end - slowest.front().begin) {
    std::pop_heap(slowest.begin(), slowest.end(), longer);
    slowest.back() = {begin, end, thread, self};
    std::push_heap(slowest.begin(), slowest.end(), longer);
  }
}

Status StepWindow::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    if (e.type != EventType::kRange || e.site->category != Category::kStep) continue;
    const auto n = static_cast<std::int64_t>(e.value);
    if (n < first_ || n > last_) continue;
    begin_ns = std::min(begin_ns, batch.time->wall_ns(e.begin));
    end_ns = std::max(end_ns, batch.time->wall_ns(e.end));
  }
  return {};
}

Status TraceReport::open(const TraceInfo& info) {
  info_ = info;
  return {};
}

NameStats& TraceReport::stats_for(std::unordered_map<std::string, NameStats>& table,
                                  const char* name) {
  auto& cache = &table == &kernel_names_ ? kernel_cache_ : range_cache_;
  const auto cached = cache.find(name);
  if (cached != cache.end()) return *cached->second;
  NameStats& s = table[name];
  if (s.name.empty()) {
    s.name = name;
    if (&table == &range_names_) {
      s.compiled_run =
          std::strncmp(name, "## Call CompiledFxGraph", 23) == 0 ||
                  std::strncmp(name, te::kCompiledGraph, sizeof te::kCompiledGraph - 1) == 0
              ? 1
          : std::strncmp(name, "Torch-Compiled Region", 21) == 0 ? 2
                                                                 : 0;
    }
  }
  cache.emplace(name, &s);
  return s;
}

void TraceReport::Runs::add(std::uint32_t thread, std::int64_t begin, std::int64_t end) {
  const auto [it, first] = open.try_emplace(thread, Interval{begin, end});
  Interval& run = it->second;
  if (first) return;
  if (begin < run.end && end > run.begin) {
    run = {std::min(run.begin, begin), std::max(run.end, end)};
    return;
  }
  ns += run.end - run.begin;
  ++count;
  run = {begin, end};
}

void TraceReport::Runs::flush() {
  for (const auto& [thread, run] : open) {
    ns += run.end - run.begin;
    ++count;
  }
  open.clear();
}

void TraceReport::retire_top(std::uint32_t thread, ThreadNesting& t) {
  const OpenRange r = t.stack.back();
  t.stack.pop_back();
  r.stats->add(r.begin, r.end, thread, options_.keep_slowest,
               std::max<std::int64_t>(r.end - r.begin - r.child_ns, 0));
  if (r.linked) return;
  if (t.roots.size() >= 2 * kMaxRoots)
    t.roots.erase(t.roots.begin(), t.roots.begin() + static_cast<std::ptrdiff_t>(kMaxRoots));
  t.roots.push_back({r.begin, r.end});
}

void TraceReport::add_range(std::uint32_t thread, NameStats& stats, std::int64_t begin,
                            std::int64_t end) {
  ThreadNesting& t = nesting_[thread];
  const auto inside = [](std::int64_t b, std::int64_t e, std::int64_t outer_b,
                         std::int64_t outer_e) { return outer_b <= b && e <= outer_e; };
  // Parents first: what ended before this range began has all its children.
  while (!t.stack.empty() && t.stack.back().end <= begin) retire_top(thread, t);
  OpenRange r{begin, end, 0, &stats, false};
  // Children first: ranges already here that this one contains are its descendants; each whose
  // parent so far is not inside this one is a direct child, moved from that parent to this one.
  while (!t.stack.empty() && inside(t.stack.back().begin, t.stack.back().end, begin, end)) {
    OpenRange& child = t.stack.back();
    OpenRange* parent = t.stack.size() > 1 ? &t.stack[t.stack.size() - 2] : nullptr;
    if (parent == nullptr || !inside(parent->begin, parent->end, begin, end)) {
      if (parent != nullptr && child.linked) parent->child_ns -= child.end - child.begin;
      r.child_ns += child.end - child.begin;
      child.linked = true;
    }
    retire_top(thread, t);
  }
  while (!t.roots.empty() && inside(t.roots.back().begin, t.roots.back().end, begin, end)) {
    r.child_ns += t.roots.back().end - t.roots.back().begin;
    t.roots.pop_back();
  }
  if (!t.stack.empty() && inside(begin, end, t.stack.back().begin, t.stack.back().end)) {
    t.stack.back().child_ns += end - begin;
    r.linked = true;
  }
  t.stack.push_back(r);
}

void TraceReport::add_gpu(const GpuActivity& a, std::int64_t begin, std::int64_t end) {
  switch (a.kind) {
    case GpuActivityKind::kKernel: {
      NameStats& k = stats_for(kernel_names_, a.name);
      k.add(begin, end, 0, 0);
      if (a.declared_bytes > 0 || a.declared_flops > 0) {
        k.declared_bytes += a.declared_bytes;
        k.declared_flops += a.declared_flops;
        k.declared_ns += end - begin;
      }
      streams_[{a.device, a.stream}].push_back({begin, end, a.correlation, true});
      gpu_work_.push_back({begin, end});
      if (a.range != nullptr) stats_for(range_names_, a.range->name).gpu_ns += end - begin;
      break;
    }
    case GpuActivityKind::kMemcpy:
    case GpuActivityKind::kMemset:
      gpu_work_.push_back({begin, end});
      streams_[{a.device, a.stream}].push_back({begin, end, a.correlation, false});
      if (a.kind == GpuActivityKind::kMemcpy) {
        if (a.bytes >= static_cast<std::uint64_t>(options_.large_copy_bytes))
          causes_[kLargeCopy].push_back({begin, end});
        CopyRow& c = copies_[static_cast<int>(a.copy_kind)];
        ++c.copies;
        c.bytes += a.bytes;
        c.ns += end - begin;
      }
      break;
    case GpuActivityKind::kRuntimeApi:
    case GpuActivityKind::kDriverApi:
      if (formats::starts_flow(a.name) && a.correlation != 0)
        launches_[a.correlation] = {begin, end};
      if (contains(a.name, "Synchronize")) causes_[kSync].push_back({begin, end});
      if (contains(a.name, "Malloc") || contains(a.name, "MemAlloc") ||
          (contains(a.name, "Free") && !contains(a.name, "FreeHost")))
        causes_[kAllocator].push_back({begin, end});
      break;
    case GpuActivityKind::kSync:
      causes_[kSync].push_back({begin, end});
      break;
    case GpuActivityKind::kOverhead:
      break;
  }
}

namespace {

bool starts_with(const char* s, std::string_view prefix) {
  return std::strncmp(s, prefix.data(), prefix.size()) == 0;
}

// torch.profiler's (Kineto's) name for the span of one frame's compile, which Dynamo's
// dynamo_timed records with a record_function; its id comes in an annotation beside it.
constexpr std::string_view kProfilerFrameCompile = "entire_frame_compile";
constexpr std::string_view kProfilerFrameCompileData = "entire_frame_compile_data:";

}  // namespace

bool TraceReport::is_frame_compile(const CallSite& site) {
  return site.category == Category::kCompile || site.name == kProfilerFrameCompile;
}

// gpuprobe.torch's marks (python/gpuprobe/torch.py): "recompile <id>: <reason>", "recompile limit
// hit: <warning>", "eager fallback <id>: <frame>: <error>", "graph break: <cause>" (one per
// occurrence). The limit warning shares the recompile prefix and is not a recompile.
void TraceReport::add_compile_mark(const char* name) {
  ReportResult::Compile& c = result_.compile;
  if (starts_with(name, te::kRecompileLimitHit)) {
    c.limit_hits.emplace_back(name);
  } else if (starts_with(name, te::kRecompile)) {
    c.recompiles.emplace_back(name + sizeof te::kRecompile - 1);
  } else if (starts_with(name, te::kEagerFallback)) {
    c.fallbacks.emplace_back(name + sizeof te::kEagerFallback - 1);
  } else if (starts_with(name, te::kGraphBreak)) {
    c.graph_breaks[name + sizeof te::kGraphBreak - 1]++;
  }
}

// torch.profiler's "entire_frame_compile_data: fn_name=..., compile_id=F/N": frame F's compile
// N, a recompile when N > 0 (such a trace does not say why).
void TraceReport::add_profiler_compile_id(const char* name) {
  if (!starts_with(name, kProfilerFrameCompileData)) return;
  const char* id = std::strstr(name, "compile_id=");
  if (id == nullptr) return;
  id += 11;
  const char* slash = std::strchr(id, '/');
  if (slash == nullptr || std::strtol(slash + 1, nullptr, 10) <= 0) return;
  result_.compile.recompiles.push_back(std::string(id, std::strcspn(id, ", ")) +
                                       ": (torch.profiler's trace does not record the reason)");
}

Status TraceReport::write(const EventBatch& batch) {
  const TimeBase& time = *batch.time;
  for (const Event& e : batch) {
    const std::int64_t begin = time.wall_ns(e.begin), end = time.wall_ns(e.end);
    if (begin < options_.window_begin_ns || begin >= options_.window_end_ns) continue;
    ++events_;
    first_ns_ = std::min(first_ns_, begin);
    last_ns_ = std::max(last_ns_, end);
    if (e.type == EventType::kGpu) {
      add_gpu(*e.gpu, begin, end);
      continue;
    }
    if (e.type == EventType::kCounter && e.site->category == Category::kCompile) {
      ReportResult::Compile& c = result_.compile;
      const std::string_view name = e.site->name;
      double* slot = name == te::kCacheHits          ? &c.cache_hits
                     : name == te::kCacheMisses      ? &c.cache_misses
                     : name == te::kGraphOps         ? &c.graph_ops
                     : name == te::kKernelsGenerated ? &c.kernels_generated
                     : name == te::kSpeedup          ? &c.speedup
                                                     : nullptr;
      if (slot != nullptr) *slot = e.value;  // totals: the last value is the answer
      continue;
    }
    if (e.type == EventType::kCounter) {
      // An allocator retry flushes the cache and synchronizes: a cause, at the moment counted.
      if (std::strcmp(e.site->name, te::kAllocRetries) == 0)
        causes_[kAllocator].push_back({begin, begin + 1});
      continue;
    }
    if (e.type == EventType::kInstant && e.site->category == Category::kCompile) {
      add_compile_mark(e.site->name);
      continue;
    }
    // Ranges on the GPU timeline (Kineto's gpu_user_annotation) repeat CPU ranges.
    if (e.type != EventType::kRange || e.site->category == Category::kCuda) continue;
    const bool compile = is_frame_compile(*e.site);
    if (compile) {
      ++result_.compile.compiles;
      result_.compile.compile_ns += end - begin;
    }
    add_profiler_compile_id(e.site->name);
    if (e.site->category == Category::kStep) ++result_.compile.steps;
    const char* name = e.site->category == Category::kStep ? formats::kStepName : e.site->name;
    NameStats& stats = stats_for(range_names_, name);
    add_range(e.thread, stats, begin, end);
    if (stats.compiled_run != 0) compiled_runs_[stats.compiled_run].add(e.thread, begin, end);
    if (e.site->category == Category::kGc) causes_[kGc].push_back({begin, end});
    if (compile) causes_[kCompile].push_back({begin, end});
  }
  return {};
}

Status TraceReport::close(const Stats& stats, const TimeBase&) {
  for (auto& [thread, t] : nesting_) {
    while (!t.stack.empty()) retire_top(thread, t);
  }
  nesting_.clear();
  threads_ = stats.threads;
  result_.dropped = stats.dropped;
  result_.gpu_dropped = stats.gpu.dropped;
  result_.names_overflowed = stats.names_overflowed;
  finish();
  return {};
}

void TraceReport::finish() {
  ReportResult& r = result_;
  r.events = events_;
  r.start_ns = events_ != 0 ? first_ns_ : 0;
  r.end_ns = events_ != 0 ? last_ns_ : 0;
  r.devices = info_.devices;
  r.rank = info_.rank;
  const auto by_total = [](const NameStats* a, const NameStats* b) {
    return a->total_ns != b->total_ns ? a->total_ns > b->total_ns : a->name < b->name;
  };
  for (const auto& [name, s] : kernel_names_) {
    r.kernels.push_back(&s);
    r.gpu_kernel_ns += s.total_ns;
  }
  for (const auto& [name, s] : range_names_) {
    if (s.count > 0) r.ranges.push_back(&s);
  }
  std::sort(r.kernels.begin(), r.kernels.end(), by_total);
  std::sort(r.ranges.begin(), r.ranges.end(), by_total);

  // Compiled code: graph runs when the trace has them (frames also hold graph breaks' eager code).
  for (Runs& runs : compiled_runs_) runs.flush();
  const Runs& runs = compiled_runs_[1].count > 0 ? compiled_runs_[1] : compiled_runs_[2];
  r.compile.runs = runs.count;
  r.compile.run_ns = runs.ns;
  // Their share of the time outside compiles (--steps narrows it to steady-state steps).
  ReportResult::Compile& c = r.compile;
  c.base_ns = std::max<std::int64_t>(r.end_ns - r.start_ns - c.compile_ns, 0);
  if (c.runs > 0) {
    c.amortised_ms = static_cast<double>(c.compile_ns) * 1e-6 / static_cast<double>(c.runs);
    if (c.base_ns > 0)
      c.share = std::min(static_cast<double>(c.run_ns) / static_cast<double>(c.base_ns), 1.0);
    if (c.share >= 0 && c.share < 1) c.amdahl_bound = 1 / (1 - c.share);
    if (c.share >= 0 && c.speedup > 0) c.program_speedup = 1 - c.share + c.share * c.speedup;
    if (c.speedup > 1 && c.run_ns > 0)
      c.break_even_runs =
          static_cast<double>(c.compile_ns) /
          (static_cast<double>(c.run_ns) / static_cast<double>(c.runs) * (c.speedup - 1));
  }

  // Streams: busy time, and each gap before a kernel classified as HTA does.
  LogHistogram launch_delay;
  std::map<std::uint32_t, std::vector<Interval>> device_work;
  for (auto& [key, spans] : streams_) {
    std::sort(spans.begin(), spans.end(),
              [](const KernelSpan& a, const KernelSpan& b) { return a.start < b.start; });
    StreamStats s;
    s.device = key.first;
    s.stream = key.second;
    s.first_ns = spans.front().start;
    std::int64_t reach = spans.front().start;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const KernelSpan& k = spans[i];
      const auto launch = launches_.find(k.correlation);
      if (k.kernel) {
        ++s.kernels;
        if (k.end - k.start < options_.tiny_kernel_ns) {
          ++r.tiny_kernels;
          r.tiny_kernel_ns += k.end - k.start;
        }
        if (launch != launches_.end()) {
          launch_delay.add(std::max<std::int64_t>(k.start - launch->second.second, 0));
          ++r.launches;
        }
      } else {
        ++s.copies;
      }
      if (i > 0 && k.start > reach) {
        const std::int64_t gap = k.start - reach;
        if (launch != launches_.end() && launch->second.first > reach) {
          s.host_wait_ns += gap;  // the host had not yet asked for this kernel
        } else if (gap < options_.consecutive_kernel_ns) {
          s.kernel_wait_ns += gap;  // launch overhead between queued kernels
        } else {
          s.other_idle_ns += gap;  // e.g. waiting on another stream's event
        }
      }
      s.busy_ns += std::max<std::int64_t>(k.end - std::max(k.start, reach), 0);
      reach = std::max(reach, k.end);
      device_work[key.first].push_back({k.start, k.end});
    }
    s.last_ns = reach;
    r.streams.push_back(s);
  }
  r.launch_delay_p50_us = launch_delay.quantile_ns(0.5) * 1e-3;
  r.launch_delay_p99_us = launch_delay.quantile_ns(0.99) * 1e-3;
  r.launch_delay_max_us = launch_delay.quantile_ns(1.0) * 1e-3;
  const double span = static_cast<double>(std::max<std::int64_t>(r.end_ns - r.start_ns, 1));
  for (auto& [device, work] : device_work) {
    merge(work);
    std::int64_t busy = 0;
    for (const Interval& i : work) busy += i.end - i.begin;
    r.device_busy_percent[device] = 100.0 * static_cast<double>(busy) / span;
  }

  // GPU busy over time: 100 slices of the trace, each the share covered by some GPU work.
  if (!gpu_work_.empty() && r.end_ns > r.start_ns) {
    merge(gpu_work_);
    const double slice = span / 100.0;
    r.gpu_busy_timeline.assign(100, 0.0);
    for (const Interval& i : gpu_work_) {
      for (std::int64_t t = i.begin; t < i.end;) {
        const auto bin = std::min<std::int64_t>(
            static_cast<std::int64_t>(static_cast<double>(t - r.start_ns) / slice), 99);
        const auto bin_end =
            r.start_ns + static_cast<std::int64_t>(slice * static_cast<double>(bin + 1));
        const std::int64_t upto = std::min(i.end, std::max(bin_end, t + 1));
        r.gpu_busy_timeline[static_cast<std::size_t>(bin)] +=
            static_cast<double>(upto - t) / slice * 100.0;
        t = upto;
      }
    }
  }
  for (const NameStats* s : r.ranges) {
    r.latency.push_back({s->name, s->count, s->quantile_ns(0.5) * 1e-6, s->quantile_ns(0.9) * 1e-6,
                         s->quantile_ns(0.99) * 1e-6, s->quantile_ns(0.999) * 1e-6,
                         static_cast<double>(s->max_ns) * 1e-6});
  }
  explain_outliers();

  // Roofline for kernels with declared costs; copy bandwidth against the link's peak.
  if (!info_.devices.empty()) r.peaks = device_peaks(info_.devices.front().name);
  const double ridge =
      r.peaks.memory_gbps > 0 ? r.peaks.fp32_tflops * 1e3 / r.peaks.memory_gbps : 0;
  for (const NameStats* k : r.kernels) {
    if (k->declared_ns <= 0 || k->declared_bytes <= 0) continue;
    RooflineRow row;
    row.name = k->name;
    const double seconds = static_cast<double>(k->declared_ns) * 1e-9;
    row.intensity = k->declared_flops / k->declared_bytes;
    row.achieved_gbps = k->declared_bytes / seconds * 1e-9;
    row.achieved_tflops = k->declared_flops / seconds * 1e-12;
    if (ridge > 0) {
      row.bound = row.intensity < ridge ? "memory" : "compute";
      row.percent_of_peak = row.bound == "memory" ? 100 * row.achieved_gbps / r.peaks.memory_gbps
                                                  : 100 * row.achieved_tflops / r.peaks.fp32_tflops;
    }
    r.roofline.push_back(row);
  }
  for (const NameStats* k : r.kernels) {
    const std::string c = kernel_class_from_name(k->name);
    (c == "communication" ? r.communication_class_ns
     : c == "compute"     ? r.compute_class_ns
     : c == "memory"      ? r.memory_class_ns
                          : r.unclassified_ns) += k->total_ns;
  }
  for (auto& [kind, c] : copies_) {
    c.kind = memcpy_kind_name(static_cast<MemcpyKind>(kind));
    c.achieved_gbps = c.ns > 0 ? static_cast<double>(c.bytes) / static_cast<double>(c.ns) : 0;
    const bool host = c.kind == "HtoD" || c.kind == "DtoH";
    c.peak_gbps = host ? r.peaks.host_link_gbps : c.kind == "DtoD" ? r.peaks.memory_gbps : 0;
    r.copies.push_back(c);
  }

  // What bounds the program.
  if (streams_.empty()) {
    r.verdict = "CPU only: no GPU activity in this trace";
  } else {
    std::int64_t host = 0, kernel = 0, other = 0;
    for (const StreamStats& s : r.streams) {
      host += s.host_wait_ns;
      kernel += s.kernel_wait_ns;
      other += s.other_idle_ns;
    }
    const std::int64_t idle = host + kernel + other;
    double busy = 0;
    for (const auto& [d, b] : r.device_busy_percent) busy = std::max(busy, b);
    char text[400];
    if (busy < 50 && idle > 0 && host * 2 > idle) {
      std::snprintf(text, sizeof text,
                    "CPU-bound: the busiest GPU works %.0f%% of the time and %.0f%% of the gaps "
                    "between its kernels are host wait (the CPU had not launched the next kernel "
                    "yet): move work off the launching thread, batch more, or use CUDA graphs",
                    busy, 100.0 * static_cast<double>(host) / static_cast<double>(idle));
    } else if (r.gpu_kernel_ns > 0 && r.tiny_kernel_ns * 2 > r.gpu_kernel_ns) {
      std::snprintf(
          text, sizeof text,
          "launch-bound: kernels under %.0f us take %.0f%% of GPU time: fuse them "
          "(torch.compile) or capture them in CUDA graphs",
          static_cast<double>(options_.tiny_kernel_ns) * 1e-3,
          100.0 * static_cast<double>(r.tiny_kernel_ns) / static_cast<double>(r.gpu_kernel_ns));
    } else if (r.communication_class_ns * 2 > r.gpu_kernel_ns) {
      std::snprintf(text, sizeof text,
                    "communication-bound: %.0f%% of kernel time is collectives (NCCL, by name): "
                    "overlap them with compute (DDP bucket sizes, FSDP prefetch), or look for a "
                    "straggler rank the others wait for",
                    100.0 * static_cast<double>(r.communication_class_ns) /
                        static_cast<double>(r.gpu_kernel_ns));
    } else if (r.memory_class_ns * 2 > r.gpu_kernel_ns) {
      std::snprintf(
          text, sizeof text,
          "GPU-bound, mostly memory-bound kernels: the busiest GPU works %.0f%% of the "
          "time and %.0f%% of kernel time is elementwise, reduction, norm or copy "
          "kernels (by name): fuse them (torch.compile) to cut memory traffic",
          busy,
          100.0 * static_cast<double>(r.memory_class_ns) / static_cast<double>(r.gpu_kernel_ns));
    } else if (r.compute_class_ns * 2 > r.gpu_kernel_ns) {
      std::snprintf(
          text, sizeof text,
          "GPU-bound, mostly compute-bound kernels: the busiest GPU works %.0f%% of the "
          "time and %.0f%% of kernel time is GEMM, convolution or attention (by name): "
          "check that they use tensor cores (TF32, bf16/fp16) and good shapes",
          busy,
          100.0 * static_cast<double>(r.compute_class_ns) / static_cast<double>(r.gpu_kernel_ns));
    } else {
      std::snprintf(text, sizeof text,
                    "GPU-bound: the busiest GPU works %.0f%% of the time; look at the top kernels",
                    busy);
    }
    r.verdict = text;
  }
}

void TraceReport::explain_outliers() {
  ReportResult& r = result_;
  const NameStats* target = nullptr;
  if (!options_.latency_name.empty()) {
    const auto it = range_names_.find(options_.latency_name);
    if (it != range_names_.end()) target = &it->second;
  } else if (const auto steps = range_names_.find(formats::kStepName);
             steps != range_names_.end()) {
    target = &steps->second;
  } else {
    for (const NameStats* s : r.ranges) {  // sorted by total time: the heaviest repeated range
      if (s->count >= 20) {
        target = s;
        break;
      }
    }
  }
  if (target == nullptr) return;
  r.latency_name = target->name;
  r.latency_count = target->count;
  std::vector<NameStats::Instance> slow = target->slowest;
  std::sort(slow.begin(), slow.end(),
            [](const auto& a, const auto& b) { return a.end - a.begin > b.end - b.begin; });
  // P99 exactly when the slowest kept include its rank (they do up to 100 x keep_slowest
  // instances), else from the histogram; outliers are strictly slower, so a flat distribution
  // has none.
  const std::size_t p99_from_top =
      target->count -
      static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(target->count)));
  std::int64_t threshold = static_cast<std::int64_t>(target->quantile_ns(0.99));
  if (options_.outlier_threshold_ms > 0) {
    threshold = static_cast<std::int64_t>(options_.outlier_threshold_ms * 1e6);
  } else if (p99_from_top < slow.size()) {
    threshold = slow[p99_from_top].end - slow[p99_from_top].begin;
  }
  r.outlier_threshold_ms = static_cast<double>(threshold) * 1e-6;
  r.latency_p50_ms = target->quantile_ns(0.5) * 1e-6;
  r.latency_p99_ms = target->quantile_ns(0.99) * 1e-6;
  // The histogram in about 40 bins: its buckets (32 per doubling) merged evenly.
  const LogHistogram& h = *target->histogram;
  int first = -1, last = -1;
  for (int b = 0; b < LogHistogram::kBuckets; ++b) {
    if (h.count(b) == 0) continue;
    if (first < 0) first = b;
    last = b;
  }
  const int per_bin = std::max(1, (last - first + 1 + 39) / 40);
  for (int b = first; b >= 0 && b <= last; b += per_bin) {
    std::uint64_t n = 0;
    for (int k = b; k < b + per_bin && k <= last; ++k) n += h.count(k);
    r.latency_histogram.emplace_back(
        std::exp2(static_cast<double>(b + per_bin) / LogHistogram::kPerOctave) * 1e-6, n);
  }
  for (auto& c : causes_) merge(c);
  merge(gpu_work_);
  // Recorded causes, then two derived from the outlier itself: GPU idle (no GPU work within it)
  // and CPU gap (its thread outside any recorded child range for longer than the range's median
  // such time: uninstrumented code, a lock or GIL wait, or the thread descheduled). The gap needs
  // children to mean something: a range with none is all self time.
  enum { kGpuIdle = kCauses, kCpuGap, kAllCauses };
  std::vector<CauseOverlap> summary(kAllCauses);
  for (int c = 0; c < kCauses; ++c) summary[c].cause = kCauseNames[c];
  summary[kGpuIdle].cause = "GPU idle";
  summary[kCpuGap].cause = "CPU gap";
  const bool has_children = target->self_ns < target->total_ns && target->self_histogram;
  const auto typical_self =
      has_children ? static_cast<std::int64_t>(target->self_histogram->quantile_ns(0.5)) : 0;
  for (const auto& inst : slow) {
    if (inst.end - inst.begin <= threshold) break;
    Outlier o;
    o.begin_ns = inst.begin;
    o.duration_ns = inst.end - inst.begin;
    o.thread = inst.thread < threads_.size() ? threads_[inst.thread].name : "";
    const auto note = [&](int cause, std::int64_t ns, std::uint64_t n) {
      o.causes.push_back({summary[cause].cause, ns, n});
      summary[cause].overlap_ns += ns;
      summary[cause].events += n;
    };
    for (int c = 0; c < kCauses; ++c) {
      const auto [covered, n] = overlap(causes_[c], inst.begin, inst.end);
      if (n != 0) note(c, covered, n);
    }
    if (!gpu_work_.empty()) {
      const std::int64_t idle = o.duration_ns - overlap(gpu_work_, inst.begin, inst.end).first;
      if (idle > 0) note(kGpuIdle, idle, 1);
    }
    // Named when it is at least 1 % of the outlier and beyond the median's precision (a
    // histogram bucket's middle, within 1.1 %).
    const std::int64_t gap = inst.self_ns - typical_self;
    if (has_children && gap > typical_self / 40 && gap * 100 >= o.duration_ns)
      note(kCpuGap, gap, 1);
    std::sort(o.causes.begin(), o.causes.end(), [](const CauseOverlap& a, const CauseOverlap& b) {
      return a.overlap_ns > b.overlap_ns;
    });
    r.outliers.push_back(std::move(o));
  }
  for (const CauseOverlap& c : summary) {
    if (c.events > 0) r.cause_summary.push_back(c);
  }
  std::sort(
      r.cause_summary.begin(), r.cause_summary.end(),
      [](const CauseOverlap& a, const CauseOverlap& b) { return a.overlap_ns > b.overlap_ns; });
}

}  // namespace gpuprobe::report
