#include "metrics/session_metrics.h"

#include <algorithm>
#include <ctime>

#include "metrics/text_exposition.h"

namespace gpuprobe::metrics {

namespace {

// The ranges the program itself records, which get a histogram per name.
bool is_program_range(Category c) {
  return c == Category::kApp || c == Category::kPython ||
         (c >= Category::kUser0 && c <= Category::kUser7);
}

}  // namespace

void MetricValues::GpuRecording::add(bool on, std::int64_t wall_ns) {
  sampled = true;
  if (on) {
    if (open_since_ns < 0) open_since_ns = wall_ns;
  } else if (open_since_ns >= 0) {
    closed_seconds += static_cast<double>(wall_ns - open_since_ns) * 1e-9;
    open_since_ns = -1;
  }
}

Histogram* SessionMetrics::histogram_for(const CallSite* site, bool* selected) {
  *selected = true;
  const auto cached = by_site_.find(site);
  if (cached != by_site_.end()) {
    *selected = cached->second != nullptr || not_selected_.count(site) == 0;
    return cached->second;
  }
  Histogram* h = nullptr;
  const std::vector<std::string>& only = selection_.names;
  auto& ranges = values_.ranges;
  if (!only.empty() && std::find(only.begin(), only.end(), site->name) == only.end()) {
    not_selected_.emplace(site, true);
    *selected = false;
  } else if (const auto named = ranges.find(site->name); named != ranges.end()) {
    h = &named->second;  // another site of the same name
  } else if (ranges.size() < selection_.max_names) {
    h = &ranges[site->name];
  }
  by_site_.emplace(site, h);
  return h;
}

void SessionMetrics::add(const EventBatch& batch) {
  MetricValues& v = values_;
  timespec cpu{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
    v.collector_cpu_seconds = static_cast<double>(cpu.tv_sec) + cpu.tv_nsec * 1e-9;
  }
  v.events += batch.size;
  if (flight_figures_) v.flight = flight_figures_();
  if (ring_bytes_) v.ring_bytes = ring_bytes_();
  if (batch.threads != nullptr) {
    std::uint64_t dropped = 0;
    for (const ThreadInfo& t : *batch.threads) dropped += t.dropped;
    v.dropped = std::max(v.dropped, dropped);  // the rows' counts only grow
  }
  const TimeBase& time = *batch.time;
  for (const Event& e : batch) {
    if (is_gpu_recording_switch(e)) {
      v.gpu_recording.add(e.value != 0, time.wall_ns(e.begin));
      continue;
    }
    if (v.framework.add(e, time)) continue;
    if (e.type == EventType::kRange) {
      if (!is_program_range(e.site->category) && e.site->category != Category::kStep) continue;
      const double seconds = duration_seconds(time, e);
      const std::int64_t tid = batch.threads != nullptr && e.thread < batch.threads->size()
                                   ? (*batch.threads)[e.thread].os_tid
                                   : 0;
      if (e.site->category == Category::kStep) {
        v.steps.add(seconds, time.wall_ns(e.end), tid);
      } else {
        bool selected = true;
        if (Histogram* h = histogram_for(e.site, &selected)) {
          h->add(seconds, time.wall_ns(e.end), tid);
        } else if (selected) {
          ++v.names_overflowed;
        }
      }
    } else if (e.type == EventType::kGpu) {
      const GpuActivity& a = *e.gpu;
      if (a.kind != GpuActivityKind::kKernel && a.kind != GpuActivityKind::kMemcpy &&
          a.kind != GpuActivityKind::kMemset) {
        continue;
      }
      MetricValues::Device& d = v.devices[a.device];
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

void SessionMetrics::finish(const Stats& stats) {
  values_.dropped = std::max(values_.dropped, stats.dropped);
  if (flight_figures_) values_.flight = flight_figures_();
}

std::string MetricValues::exposition(TextFormat format) const {
  TextExposition out(format);
  const std::string rank_text = std::to_string(rank);
  if (rank >= 0) out.set_common_labels({{"rank", rank_text}});
  out.family("gpuprobe_range_duration_seconds", "histogram",
             "Duration of gpuprobe ranges, by range name.");
  for (const auto& [name, h] : ranges) {
    h.write(&out, "gpuprobe_range_duration_seconds", {{"name", name}});
  }
  out.family("gpuprobe_range_names_overflowed_total", "counter",
             "Ranges not in gpuprobe_range_duration_seconds: their name came after the cap on "
             "exported names.");
  out.sample("gpuprobe_range_names_overflowed_total", {}, static_cast<double>(names_overflowed));
  out.family("gpuprobe_step_duration_seconds", "histogram",
             "Duration of steps (gpuprobe::step, ProfilerStep).");
  steps.write(&out, "gpuprobe_step_duration_seconds", {});
  if (!devices.empty()) {
    out.family("gpuprobe_gpu_kernels_total", "counter", "Kernels that ran, by device.");
    for (const auto& [device, d] : devices) {
      const std::string id = std::to_string(device);
      out.sample("gpuprobe_gpu_kernels_total", {{"device", id}}, static_cast<double>(d.kernels));
    }
    out.family("gpuprobe_gpu_busy_seconds_total", "counter",
               "Time some kernel, copy or memset ran, by device; its rate is the busy ratio "
               "(over the rate of gpuprobe_gpu_recorded_seconds_total when sampled).");
    for (const auto& [device, d] : devices) {
      const std::string id = std::to_string(device);
      out.sample("gpuprobe_gpu_busy_seconds_total", {{"device", id}}, d.busy_seconds);
    }
  }
  if (gpu_recording.sampled || !devices.empty()) {
    out.family("gpuprobe_gpu_sampled", "gauge",
               "1 when GPU activity is recorded in bursts (gpu_burst=): the GPU figures are "
               "then samples of gpuprobe_gpu_recorded_seconds_total; 0 when recorded always.");
    out.sample("gpuprobe_gpu_sampled", {}, gpu_recording.sampled ? 1 : 0);
  }
  if (gpu_recording.sampled) {
    out.family("gpuprobe_gpu_recorded_seconds_total", "counter",
               "Time GPU activity was recorded, in bursts (gpu_burst=).");
    double seconds = gpu_recording.closed_seconds;
    if (gpu_recording.open_since_ns >= 0) {
      timespec now{};
      clock_gettime(CLOCK_REALTIME, &now);
      const std::int64_t now_ns =
          static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
      seconds +=
          static_cast<double>(std::max<std::int64_t>(0, now_ns - gpu_recording.open_since_ns)) *
          1e-9;
    }
    out.sample("gpuprobe_gpu_recorded_seconds_total", {}, seconds);
  }
  framework.write(&out);
  flight.write(&out);
  out.family("gpuprobe_memory_bytes", "gauge",
             "Memory gpuprobe holds now: the thread rings (at most rings_mb) and the flight "
             "recorder (at most flight_mb).");
  out.sample("gpuprobe_memory_bytes", {{"part", "rings"}}, static_cast<double>(ring_bytes));
  if (flight.enabled) {
    out.sample("gpuprobe_memory_bytes", {{"part", "flight"}}, static_cast<double>(flight.bytes));
  }
  out.family("gpuprobe_events_total", "counter", "Events delivered to gpuprobe's outputs.");
  out.sample("gpuprobe_events_total", {}, static_cast<double>(events));
  out.family("gpuprobe_events_dropped_total", "counter",
             "Events lost because a thread's ring was full or no ring could be had.");
  out.sample("gpuprobe_events_dropped_total", {}, static_cast<double>(dropped));
  out.family("gpuprobe_collector_cpu_seconds_total", "counter",
             "CPU time of gpuprobe's collector thread (draining, GPU records, every output).");
  out.sample("gpuprobe_collector_cpu_seconds_total", {}, collector_cpu_seconds);
  return out.finish();
}

}  // namespace gpuprobe::metrics
