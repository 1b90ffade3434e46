#include "report/trace_report.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "sinks/chrome_gpu_events.h"

namespace gpuprobe::report {
namespace {

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

void NameStats::add(std::int64_t begin, std::int64_t end, std::uint32_t thread, std::size_t keep) {
  const std::int64_t d = end - begin;
  ++count;
  total_ns += d;
  min_ns = std::min(min_ns, d);
  max_ns = std::max(max_ns, d);
  histogram->add(d);
  const auto longer = [](const Instance& a, const Instance& b) {
    return a.end - a.begin > b.end - b.begin;
  };
  if (slowest.size() < keep) {
    slowest.push_back({begin, end, thread});
    std::push_heap(slowest.begin(), slowest.end(), longer);
  } else if (keep > 0 && d > slowest.front().end - slowest.front().begin) {
    std::pop_heap(slowest.begin(), slowest.end(), longer);
    slowest.back() = {begin, end, thread};
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
  if (s.name.empty()) s.name = name;
  cache.emplace(name, &s);
  return s;
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
      if (sinks::starts_flow(a.name) && a.correlation != 0) launches_[a.correlation] = {begin, end};
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
      double* slot = name == "compile cache hits"          ? &c.cache_hits
                     : name == "compile cache misses"      ? &c.cache_misses
                     : name == "compile graph ops"         ? &c.graph_ops
                     : name == "compile kernels generated" ? &c.kernels_generated
                     : name == "compile speedup"           ? &c.speedup
                                                           : nullptr;
      if (slot != nullptr) *slot = e.value;  // totals: the last value is the answer
      continue;
    }
    if (e.type == EventType::kCounter) {
      // An allocator retry flushes the cache and synchronizes: a cause, at the moment counted.
      if (std::strcmp(e.site->name, "cuda alloc retries") == 0)
        causes_[kAllocator].push_back({begin, begin + 1});
      continue;
    }
    if (e.type == EventType::kInstant && e.site->category == Category::kCompile) {
      // gpuprobe.torch's marks: "recompile <id>: <reason>", "graph break: <reason>".
      const char* name = e.site->name;
      if (std::strncmp(name, "recompile ", 10) == 0)
        result_.compile.recompiles.emplace_back(name + 10);
      if (std::strncmp(name, "graph break: ", 13) == 0) result_.compile.graph_breaks[name + 13]++;
      continue;
    }
    if (e.type != EventType::kRange) continue;
    if (e.site->category == Category::kCompile) {
      ++result_.compile.compiles;
      result_.compile.compile_ns += end - begin;
    }
    if (e.site->category == Category::kStep) ++result_.compile.steps;
    const char* name = e.site->category == Category::kStep ? "ProfilerStep" : e.site->name;
    stats_for(range_names_, name).add(begin, end, e.thread, options_.keep_slowest);
    if (e.site->category == Category::kGc) causes_[kGc].push_back({begin, end});
    if (e.site->category == Category::kCompile) causes_[kCompile].push_back({begin, end});
  }
  return {};
}

Status TraceReport::close(const Stats& stats, const TimeBase&) {
  threads_ = stats.threads;
  result_.dropped = stats.dropped;
  result_.gpu_dropped = stats.gpu.dropped + stats.gpu.buffers_exhausted;
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
  } else if (const auto steps = range_names_.find("ProfilerStep"); steps != range_names_.end()) {
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
  std::vector<CauseOverlap> summary(kCauses + 1);
  for (int c = 0; c < kCauses; ++c) summary[c].cause = kCauseNames[c];
  summary[kCauses].cause = "GPU idle";
  for (const auto& inst : slow) {
    if (inst.end - inst.begin <= threshold) break;
    Outlier o;
    o.begin_ns = inst.begin;
    o.duration_ns = inst.end - inst.begin;
    o.thread = inst.thread < threads_.size() ? threads_[inst.thread].name : "";
    for (int c = 0; c < kCauses; ++c) {
      const auto [covered, n] = overlap(causes_[c], inst.begin, inst.end);
      if (n == 0) continue;
      o.causes.push_back({kCauseNames[c], covered, n});
      summary[c].overlap_ns += covered;
      summary[c].events += n;
    }
    if (!gpu_work_.empty()) {
      const std::int64_t busy = overlap(gpu_work_, inst.begin, inst.end).first;
      const std::int64_t idle = o.duration_ns - busy;
      if (idle > 0) {
        o.causes.push_back({"GPU idle", idle, 1});
        summary[kCauses].overlap_ns += idle;
        summary[kCauses].events += 1;
      }
    }
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
