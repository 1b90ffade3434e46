#include "analysis/gpu_idle.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/log_histogram.h"
#include "formats/kineto.h"

#include "absl/strings/str_format.h"

namespace gpuprobe::analysis {

void GpuIdle::add(const ReportEvent& r) {
  if (is_gpu_recording_switch(*r.event)) {
    switches_.emplace_back(r.begin_ns, r.event->value != 0);
    return;
  }
  if (r.event->type != EventType::kGpu) return;
  const GpuActivity& a = *r.event->gpu;
  switch (a.kind) {
    case GpuActivityKind::kKernel:
    case GpuActivityKind::kMemcpy:
    case GpuActivityKind::kMemset:
      streams_[{a.device, a.stream}].push_back(
          {r.begin_ns, r.end_ns, a.correlation, a.kind == GpuActivityKind::kKernel, a.name});
      gpu_work_.push_back({r.begin_ns, r.end_ns});
      break;
    case GpuActivityKind::kRuntimeApi:
    case GpuActivityKind::kDriverApi:
      if (formats::starts_flow(a.name) && a.correlation != 0)
        launches_[a.correlation] = {r.begin_ns, r.end_ns};
      break;
    default:
      break;
  }
}

bool GpuIdle::recorded(std::int64_t from, std::int64_t to) const {
  if (switches_.empty()) return true;
  const auto after =
      std::upper_bound(recorded_.begin(), recorded_.end(), from,
                       [](std::int64_t t, const Interval& i) { return t < i.begin; });
  return after != recorded_.begin() && std::prev(after)->end >= to;
}

const GpuIdle::Ended* GpuIdle::behind(const std::vector<Ended>& ended, std::uint32_t stream,
                                      std::int64_t from, std::int64_t to) {
  auto it = std::upper_bound(ended.begin(), ended.end(), to,
                             [](std::int64_t t, const Ended& e) { return t < e.end; });
  // The latest end at or before `to` on another stream; a few steps back at most (the device's
  // streams are few), and not before the wait began nor further than the slack.
  for (int steps = 0; it != ended.begin() && steps < 64; ++steps) {
    --it;
    if (it->end <= from || it->end < to - kBehindSlackNs) return nullptr;
    if (it->stream != stream) return &*it;
  }
  return nullptr;
}

void GpuIdle::finish(const TraceContext& trace) {
  GpuIdleResult& r = result_;
  if (!switches_.empty()) {
    // On from each switch on to the next switch off; the trace's start counts as on when its
    // first switch is off (a dump's window can begin inside a burst).
    std::stable_sort(switches_.begin(), switches_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    bool on = !switches_.front().second;
    std::int64_t since = trace.start_ns;
    for (const auto& [at, now_on] : switches_) {
      if (on && !now_on) recorded_.push_back({since, at});
      if (!on && now_on) since = at;
      on = now_on;
    }
    if (on && trace.end_ns > since) recorded_.push_back({since, trace.end_ns});
    r.sampled = true;
    for (const Interval& i : recorded_) r.recorded_ns += i.end - i.begin;
  }
  LogHistogram launch_delay, kernel_time, launch_call;
  std::map<std::uint32_t, std::vector<Interval>> device_work;
  std::map<std::uint32_t, std::vector<Ended>> ended;  // by device, sorted by end
  for (const auto& [key, spans] : streams_) {
    for (const Span& k : spans) ended[key.first].push_back({k.end, key.second, k.name});
  }
  for (auto& [device, e] : ended) {
    std::sort(e.begin(), e.end(), [](const Ended& a, const Ended& b) { return a.end < b.end; });
  }
  for (auto& [key, spans] : streams_) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
    std::map<std::pair<std::string_view, std::uint32_t>, WaitedBehind> behind_by;
    StreamStats s;
    s.device = key.first;
    s.stream = key.second;
    s.first_ns = spans.front().start;
    std::int64_t reach = spans.front().start;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const Span& k = spans[i];
      const auto launch = launches_.find(k.correlation);
      if (k.kernel) {
        ++s.kernels;
        kernel_time.add(k.end - k.start);
        if (k.end - k.start < options_.tiny_kernel_ns) {
          ++r.tiny_kernels;
          r.tiny_kernel_ns += k.end - k.start;
        }
        if (launch != launches_.end()) {
          launch_delay.add(std::max<std::int64_t>(k.start - launch->second.second, 0));
          launch_call.add(launch->second.second - launch->second.first);
          ++r.launches;
        }
      } else {
        ++s.copies;
      }
      if (i > 0 && k.start > reach && recorded(reach, k.start)) {
        const std::int64_t gap = k.start - reach;
        if (launch != launches_.end() && launch->second.first > reach) {
          s.host_wait_ns += gap;  // the host had not yet asked for this kernel
        } else if (gap < options_.consecutive_kernel_ns) {
          s.kernel_wait_ns += gap;  // launch overhead between queued kernels
        } else {
          s.other_idle_ns += gap;  // e.g. waiting on another stream's event
          if (const Ended* b = behind(ended[key.first], key.second, reach, k.start)) {
            WaitedBehind& w = behind_by[{b->name, b->stream}];
            w.wait_ns += gap;
            ++w.waits;
          } else {
            s.unexplained_wait_ns += gap;
          }
        }
      }
      s.busy_ns += std::max<std::int64_t>(k.end - std::max(k.start, reach), 0);
      reach = std::max(reach, k.end);
      device_work[key.first].push_back({k.start, k.end});
    }
    s.last_ns = reach;
    for (auto& [what, w] : behind_by) {
      w.name = std::string(what.first);
      w.stream = what.second;
      s.waited_behind.push_back(std::move(w));
    }
    std::sort(s.waited_behind.begin(), s.waited_behind.end(),
              [](const WaitedBehind& a, const WaitedBehind& b) { return a.wait_ns > b.wait_ns; });
    if (s.waited_behind.size() > kMaxBehind) s.waited_behind.resize(kMaxBehind);
    r.streams.push_back(std::move(s));
  }
  r.launch_delay_p50_us = launch_delay.quantile_ns(0.5) * 1e-3;
  r.launch_delay_p99_us = launch_delay.quantile_ns(0.99) * 1e-3;
  r.launch_delay_max_us = launch_delay.quantile_ns(1.0) * 1e-3;
  for (const StreamStats& s : r.streams) r.kernels += s.kernels;
  if (r.kernels > 0) {
    r.kernel_p50_us = kernel_time.quantile_ns(0.5) * 1e-3;
    const double seconds =
        static_cast<double>(r.sampled ? r.recorded_ns : trace.end_ns - trace.start_ns) * 1e-9;
    if (seconds > 0) r.kernels_per_second = static_cast<double>(r.kernels) / seconds;
  }
  if (r.launches > 0) r.launch_call_p50_us = launch_call.quantile_ns(0.5) * 1e-3;
  const double span = trace.span_ns();
  const double denominator =
      r.sampled && r.recorded_ns > 0 ? static_cast<double>(r.recorded_ns) : span;
  for (auto& [device, work] : device_work) {
    merge(work);
    std::int64_t busy = 0;
    for (const Interval& i : work) busy += i.end - i.begin;
    r.device_busy_percent[device] = 100.0 * static_cast<double>(busy) / denominator;
    if (options_.timeline_bins > 0) {
      r.device_busy_timeline[device] =
          coverage_bins(work, trace.start_ns, trace.end_ns, options_.timeline_bins);
    }
  }

  // GPU busy over time: 100 slices of the trace, each the share covered by some GPU work.
  merge(gpu_work_);
  if (!gpu_work_.empty())
    r.busy_timeline = coverage_bins(gpu_work_, trace.start_ns, trace.end_ns, 100);
}

void GpuIdle::write_json(const TraceContext&, nlohmann::json* report) const {
  using nlohmann::json;
  const GpuIdleResult& r = result_;
  json streams = json::array();
  for (const StreamStats& s : r.streams) {
    json behind = json::array();
    for (const WaitedBehind& w : s.waited_behind) {
      behind.push_back(
          {{"name", w.name}, {"stream", w.stream}, {"wait_ms", ms(w.wait_ns)}, {"waits", w.waits}});
    }
    streams.push_back({{"device", s.device},
                       {"stream", s.stream},
                       {"kernels", s.kernels},
                       {"busy_ms", ms(s.busy_ns)},
                       {"host_wait_ms", ms(s.host_wait_ns)},
                       {"kernel_wait_ms", ms(s.kernel_wait_ns)},
                       {"other_idle_ms", ms(s.other_idle_ns)},
                       {"waited_behind", behind},
                       {"unexplained_wait_ms", ms(s.unexplained_wait_ns)}});
  }
  json devices = json::object();
  for (const auto& [d, busy] : r.device_busy_percent) devices[std::to_string(d)] = busy;
  json& gpu = (*report)["gpu"];
  gpu["busy_percent"] = devices;
  gpu["sampled"] = r.sampled;  // busy_percent then of recorded_s, not of the trace
  if (r.sampled) gpu["recorded_s"] = static_cast<double>(r.recorded_ns) / 1e9;
  gpu["busy_timeline_percent"] = r.busy_timeline;
  if (!r.device_busy_timeline.empty()) {
    json timelines = json::object();
    for (const auto& [d, bins] : r.device_busy_timeline) timelines[std::to_string(d)] = bins;
    gpu["device_busy_timeline_percent"] = timelines;
  }
  gpu["streams"] = streams;
  gpu["tiny_kernels"] = {{"count", r.tiny_kernels}, {"ms", ms(r.tiny_kernel_ns)}};
  gpu["kernels"] = {{"count", r.kernels},
                    {"per_second", r.kernels_per_second},
                    {"p50_us", r.kernel_p50_us},
                    {"launch_call_p50_us", r.launch_call_p50_us}};
  gpu["launch_delay_us"] = {{"launches", r.launches},
                            {"p50", r.launch_delay_p50_us},
                            {"p99", r.launch_delay_p99_us},
                            {"max", r.launch_delay_max_us}};
}

Section describe_gpu(const GpuIdleResult& gpu, const GpuBreakdownResult& breakdown,
                     std::int64_t gpu_kernel_ns) {
  Section s("gpu");
  if (gpu.streams.empty()) return s;
  s.line(0, "GPU utilisation");
  if (gpu.sampled) {
    s.line(1, absl::StrFormat("GPU activity sampled (gpu_burst=): %.3f s recorded in bursts",
                              static_cast<double>(gpu.recorded_ns) / 1e9));
  }
  for (const auto& [device, busy] : gpu.device_busy_percent) {
    s.line(1, absl::StrFormat("GPU %u: busy %.1f%% of the %s", device, busy,
                              gpu.sampled ? "time recorded" : "trace"));
  }
  describe_breakdown(breakdown, &s);
  Table& t = s.table(1, {{"stream", 16, true},
                         {"kernels", 8},
                         {"copies", 7},
                         {"busy ms", 10},
                         {"busy %", 8},
                         {"host wait ms", 14},
                         {"kernel wait ms", 14},
                         {"other idle ms", 14}});
  for (const StreamStats& st : gpu.streams) {
    const double window = ms(st.last_ns - st.first_ns);
    Row row{{absl::StrFormat("GPU %u stream %u", st.device, st.stream),
             absl::StrFormat("%u", st.kernels), absl::StrFormat("%u", st.copies),
             absl::StrFormat("%.3f", ms(st.busy_ns)),
             absl::StrFormat("%.1f%%", window > 0 ? 100.0 * ms(st.busy_ns) / window : 100.0),
             absl::StrFormat("%.3f", ms(st.host_wait_ns)),
             absl::StrFormat("%.3f", ms(st.kernel_wait_ns)),
             absl::StrFormat("%.3f", ms(st.other_idle_ns))},
            {}};
    for (const WaitedBehind& w : st.waited_behind) {
      row.notes.push_back(absl::StrFormat("waited behind %s on stream %u: %.3f ms, %u waits",
                                          w.name, w.stream, ms(w.wait_ns), w.waits));
    }
    t.rows.push_back(std::move(row));
  }
  if (gpu.launches > 0) {
    s.line(1, absl::StrFormat("launch delay (kernel start - launch call end): p50 %.1f us, p99 "
                              "%.1f us, max %.1f us over %u launches",
                              gpu.launch_delay_p50_us, gpu.launch_delay_p99_us,
                              gpu.launch_delay_max_us, gpu.launches));
  }
  s.line(1, absl::StrFormat("tiny kernels (< 10 us): %u, %.1f%% of GPU kernel time%s",
                            gpu.tiny_kernels,
                            gpu_kernel_ns > 0 ? 100.0 * static_cast<double>(gpu.tiny_kernel_ns) /
                                                    static_cast<double>(gpu_kernel_ns)
                                              : 0.0,
                            gpu.tiny_kernels > 0
                                ? " -- fuse them (torch.compile) or replay them as a CUDA graph"
                                : ""));
  return s;
}

}  // namespace gpuprobe::analysis
