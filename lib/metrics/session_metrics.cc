#include "metrics/session_metrics.h"

#include <algorithm>
#include <charconv>

#include "metrics/text_exposition.h"

namespace gpuprobe::metrics {

void SessionMetrics::Histogram::add(double seconds) {
  const auto edge =
      std::lower_bound(kDurationBuckets.begin(), kDurationBuckets.end(), seconds);  // le: <=
  ++counts[static_cast<std::size_t>(edge - kDurationBuckets.begin())];
  sum += seconds;
  ++count;
}

SessionMetrics::Histogram* SessionMetrics::histogram_for(const CallSite* site) {
  const auto cached = by_site_.find(site);
  if (cached != by_site_.end()) return cached->second;
  Histogram* h = nullptr;
  const auto named = by_name_.find(site->name);  // another site of the same name
  if (named != by_name_.end()) {
    h = &named->second;
  } else if (by_name_.size() < max_names_) {
    h = &by_name_[site->name];
  }
  by_site_.emplace(site, h);
  return h;
}

void SessionMetrics::add(const EventBatch& batch) {
  events_ += batch.size;
  if (batch.threads != nullptr) {
    std::uint64_t dropped = 0;
    for (const ThreadInfo& t : *batch.threads) dropped += t.dropped;
    dropped_ = std::max(dropped_, dropped);  // the rows' counts only grow
  }
  const TimeBase& time = *batch.time;
  for (const Event& e : batch) {
    if (e.type == EventType::kRange) {
      if (e.site->category == Category::kCuda) continue;  // GPU annotations read from traces
      const double seconds = static_cast<double>(time.duration_ns(e.begin, e.end)) * 1e-9;
      if (e.site->category == Category::kStep) {
        steps_.add(seconds);
      } else if (Histogram* h = histogram_for(e.site)) {
        h->add(seconds);
      } else {
        ++names_overflowed_;
      }
    } else if (e.type == EventType::kGpu) {
      const GpuActivity& a = *e.gpu;
      if (a.kind != GpuActivityKind::kKernel && a.kind != GpuActivityKind::kMemcpy &&
          a.kind != GpuActivityKind::kMemset) {
        continue;
      }
      Device& d = devices_[a.device];
      d.kernels += a.kind == GpuActivityKind::kKernel;
      // Time some work ran, overlaps counted once (exact when work arrives in start order, as
      // CUPTI hands a device's records over).
      const std::int64_t start = time.wall_ns(a.start), end = time.wall_ns(a.end);
      const std::int64_t from = std::max(start, d.covered_until_ns);
      if (end > from) {
        d.busy_seconds += static_cast<double>(end - from) * 1e-9;
        d.covered_until_ns = end;
      }
    }
  }
}

void SessionMetrics::finish(const Stats& stats) { dropped_ = std::max(dropped_, stats.dropped); }

namespace {

void write_histogram(TextExposition* out, std::string_view name, Labels labels,
                     const std::array<std::uint64_t, kDurationBuckets.size() + 1>& counts,
                     double sum, std::uint64_t count) {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  char edge[32];
  labels.emplace_back("le", "");
  for (std::size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    if (i < kDurationBuckets.size()) {
      const auto r = std::to_chars(edge, edge + sizeof edge, kDurationBuckets[i]);
      labels.back().second = std::string_view(edge, static_cast<std::size_t>(r.ptr - edge));
    } else {
      labels.back().second = "+Inf";
    }
    out->sample(bucket, labels, static_cast<double>(cumulative));
  }
  labels.pop_back();
  out->sample(std::string(name) + "_sum", labels, sum);
  out->sample(std::string(name) + "_count", labels, static_cast<double>(count));
}

}  // namespace

std::string SessionMetrics::exposition() const {
  TextExposition out;
  out.family("gpuprobe_range_duration_seconds", "histogram",
             "Duration of gpuprobe ranges, by range name.");
  for (const auto& [name, h] : by_name_) {
    write_histogram(&out, "gpuprobe_range_duration_seconds", {{"name", name}}, h.counts, h.sum,
                    h.count);
  }
  out.family("gpuprobe_range_names_overflowed_total", "counter",
             "Ranges not in gpuprobe_range_duration_seconds: their name came after the cap on "
             "exported names.");
  out.sample("gpuprobe_range_names_overflowed_total", {}, static_cast<double>(names_overflowed_));
  out.family("gpuprobe_step_duration_seconds", "histogram",
             "Duration of steps (gpuprobe::step, ProfilerStep).");
  write_histogram(&out, "gpuprobe_step_duration_seconds", {}, steps_.counts, steps_.sum,
                  steps_.count);
  if (!devices_.empty()) {
    out.family("gpuprobe_gpu_kernels_total", "counter", "Kernels that ran, by device.");
    for (const auto& [device, d] : devices_) {
      const std::string id = std::to_string(device);
      out.sample("gpuprobe_gpu_kernels_total", {{"device", id}}, static_cast<double>(d.kernels));
    }
    out.family("gpuprobe_gpu_busy_seconds_total", "counter",
               "Time some kernel, copy or memset ran, by device; its rate is the busy ratio.");
    for (const auto& [device, d] : devices_) {
      const std::string id = std::to_string(device);
      out.sample("gpuprobe_gpu_busy_seconds_total", {{"device", id}}, d.busy_seconds);
    }
  }
  out.family("gpuprobe_events_total", "counter", "Events delivered to gpuprobe's outputs.");
  out.sample("gpuprobe_events_total", {}, static_cast<double>(events_));
  out.family("gpuprobe_events_dropped_total", "counter",
             "Events lost because a thread's ring was full or no ring could be had.");
  out.sample("gpuprobe_events_dropped_total", {}, static_cast<double>(dropped_));
  return out.take();
}

}  // namespace gpuprobe::metrics
