#include "sinks/chrome_trace_sink.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "formats/category_names.h"
#include "formats/device_properties.h"
#include "formats/kineto.h"
#include "formats/steps.h"
#include "gpuprobe/version.hpp"
#include "sinks/chrome_gpu_events.h"
#include "sinks/json_writer.h"

namespace gpuprobe::sinks {
namespace {

using formats::api_thread_tid;
using formats::gpu_pid;
using formats::kOverheadPid;

constexpr std::int64_t kNsPerDay = 86'400'000'000'000;

}  // namespace

ChromeTraceSink::ChromeTraceSink(std::string path) : path_(std::move(path)) {}

std::int64_t ChromeTraceSink::base_time_ns(std::int64_t start_wall_ns) {
  return start_wall_ns - start_wall_ns % kNsPerDay;
}

std::string ChromeTraceSink::torch_profiler_name(const TraceInfo& info) {
  return base::host_name() + "_" + std::to_string(info.pid) + "." +
         std::to_string(info.start_wall_ns) + ".pt.trace.json";
}

Status ChromeTraceSink::open(const TraceInfo& info) {
  info_ = info;
  path_ = base::expand_path(path_);
  base_ns_ = base_time_ns(info.start_wall_ns);
  // A directory: torch.profiler's tensorboard_trace_handler layout, which HTA and the
  // TensorBoard profiler plugin look for; "DIR/+gz" gzips, as the handler's use_gzip does.
  const bool gzip_dir = path_.size() >= 4 && path_.compare(path_.size() - 4, 4, "/+gz") == 0;
  if (gzip_dir) path_.resize(path_.size() - 3);
  if (!path_.empty() && path_.back() == '/') {
    std::error_code ec;
    std::filesystem::create_directories(path_, ec);
    if (ec) return Status::Error("cannot create directory '" + path_ + "': " + ec.message());
    path_ += torch_profiler_name(info);
    if (gzip_dir) path_ += ".gz";
  }
  if (Status s = out_.open(path_); !s.ok()) return s;
  buf_ = "{\n  \"schemaVersion\": 1,\n";
  append_distributed_info();
  append_device_properties();
  buf_ += "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ";
  append_int(&buf_, base_ns_);
  buf_ += ",\n  \"traceEvents\": [\n";
  return {};
}

// Devices and the rank a reader learned only at the end of its input are written at close.
void ChromeTraceSink::update_info(const TraceInfo& info) { adopt_trace_info(info_, info); }

void ChromeTraceSink::append_distributed_info() {
  if (info_.rank < 0 || distributed_written_) return;
  distributed_written_ = true;
  // HTA finds the rank with a pattern that expects exactly `"rank": N`, space included.
  buf_ += "  \"distributedInfo\": {\"backend\": \"unknown\", \"rank\": ";
  append_int(&buf_, info_.rank);
  if (info_.world_size > 0) {
    buf_ += ", \"world_size\": ";
    append_int(&buf_, info_.world_size);
  }
  buf_ += "},\n";
}

void ChromeTraceSink::append_device_properties() {
  if (info_.devices.empty() || devices_written_) return;
  devices_written_ = true;
  buf_ += "  \"deviceProperties\": [";
  for (std::size_t i = 0; i < info_.devices.size(); ++i) {
    const DeviceInfo& d = info_.devices[i];
    buf_ += i == 0 ? "\n    {\"id\": " : ",\n    {\"id\": ";
    append_int(&buf_, d.id);
    buf_ += ", \"name\": ";
    append_json_string(&buf_, d.name);
    for (const formats::DeviceProperty& p : formats::device_properties()) {
      if (std::strcmp(p.key, "id") == 0) continue;  // first, above
      buf_ += ", \"";
      buf_ += p.key;
      buf_ += "\": ";
      append_int(&buf_, p.get(d));
    }
    buf_ += "}";
  }
  buf_ += "],\n";
}

void ChromeTraceSink::append_separator() {
  if (!first_event_) buf_ += ",\n";
  first_event_ = false;
}

const ChromeTraceSink::SiteText& ChromeTraceSink::site_text(const CallSite* site) {
  auto [it, inserted] = sites_.try_emplace(site);
  if (!inserted) return it->second;
  SiteText& t = it->second;
  t.quoted_name.clear();
  append_json_string(&t.quoted_name, site->name);
  std::string cat;
  append_json_string(&cat, formats::chrome_category(site->category, info_.category_names));
  const char* phases[3] = {
      "{\"ph\":\"X\",\"cat\":", "{\"ph\":\"i\",\"s\":\"t\",\"cat\":", "{\"ph\":\"C\",\"cat\":"};
  for (int i = 0; i < 3; ++i) t.head[i] = phases[i] + cat + ",\"name\":" + t.quoted_name + ",";
  return t;
}

const std::string& ChromeTraceSink::thread_text(std::uint32_t thread,
                                                const std::vector<ThreadInfo>& threads) {
  if (thread >= threads_.size()) threads_.resize(thread + 1);
  std::string& text = threads_[thread];
  if (text.empty()) {
    text = "\"pid\":";
    append_int(&text, info_.pid);
    text += ",\"tid\":";
    append_int(&text, threads[thread].os_tid);
    text += ",";
  }
  return text;
}

void ChromeTraceSink::append_event(const Event& e, const TimeBase& time,
                                   const std::vector<ThreadInfo>& threads) {
  append_separator();
  if (e.type == EventType::kGpu) {
    const GpuActivity& a = *e.gpu;
    if (a.kind == GpuActivityKind::kOverhead) {
      overhead_seen_ = true;
    } else if (a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi) {
      if (a.os_tid == 0) unknown_api_threads_.insert(api_thread_tid(a));
    } else {
      devices_.insert(a.device);
      streams_.emplace(a.device, a.stream);
    }
    append_gpu_event(&buf_, a, time, base_ns_, info_.pid);
    return;
  }
  const SiteText& site = site_text(e.site);
  if (e.site->category == Category::kStep) {
    // One site for all steps; the number is the event's (Kineto names them ProfilerStep#N).
    buf_ += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":";
    append_json_string(&buf_, formats::step_event_name(static_cast<std::int64_t>(e.value)));
    buf_ += ",";
  } else {
    buf_ += site.head[static_cast<int>(e.type)];
  }
  buf_ += thread_text(e.thread, threads);
  const std::int64_t begin_ns = time.wall_ns(e.begin);
  buf_ += "\"ts\":";
  append_micros(&buf_, begin_ns - base_ns_);
  switch (e.type) {
    case EventType::kRange:
      buf_ += ",\"dur\":";
      append_micros(&buf_, time.wall_ns(e.end) - begin_ns);
      buf_ += "}";
      break;
    case EventType::kInstant:
      buf_ += "}";
      break;
    case EventType::kCounter:
      buf_ += ",\"args\":{";
      buf_ += site.quoted_name;
      buf_ += ":";
      append_double(&buf_, e.value);
      buf_ += "}}";
      break;
    case EventType::kGpu:  // written by append_gpu_event() above
      break;
  }
}

Status ChromeTraceSink::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    append_event(e, *batch.time, *batch.threads);
    if (Status s = out_.flush_if_full(); !s.ok()) return s;
  }
  return {};
}

void ChromeTraceSink::append_metadata(const Stats& stats, std::int64_t ts_ns) {
  const auto meta = [&](std::string_view name, std::int64_t pid, std::int64_t tid,
                        std::string_view key, const auto& append_value) {
    append_separator();
    buf_ += "{\"ph\":\"M\",\"name\":\"";
    buf_ += name;
    buf_ += "\",\"pid\":";
    append_int(&buf_, pid);
    buf_ += ",\"tid\":";
    append_int(&buf_, tid);
    buf_ += ",\"ts\":";
    append_micros(&buf_, ts_ns);
    buf_ += ",\"args\":{\"";
    buf_ += key;
    buf_ += "\":";
    append_value();
    buf_ += "}}";
  };
  const auto str = [&](std::string_view s) { return [this, s] { append_json_string(&buf_, s); }; };
  const auto num = [&](std::int64_t v) { return [this, v] { append_int(&buf_, v); }; };
  const std::int64_t pid = info_.pid;
  meta("process_name", pid, 0, "name", str(info_.process_name));
  meta("process_labels", pid, 0, "labels", str("CPU"));
  meta("process_sort_index", pid, 0, "sort_index", num(pid));
  for (std::size_t i = 0; i < stats.threads.size(); ++i) {
    const ThreadInfo& t = stats.threads[i];
    std::string label = "thread " + std::to_string(t.os_tid);
    if (!t.name.empty()) label += " (" + t.name + ")";
    meta("thread_name", pid, t.os_tid, "name", str(label));
    meta("thread_sort_index", pid, t.os_tid, "sort_index", num(static_cast<std::int64_t>(i)));
  }
  // GPUs sort after the host process, in device order, as in Kineto's traces.
  for (const std::uint32_t device : devices_) {
    const std::string label = "GPU " + std::to_string(device);
    meta("process_name", gpu_pid(device), 0, "name", str(label));
    meta("process_labels", gpu_pid(device), 0, "labels", str(label));
    meta("process_sort_index", gpu_pid(device), 0, "sort_index",
         num(0x1000000 + std::int64_t{device}));
  }
  for (const auto& [device, stream] : streams_) {
    meta("thread_name", gpu_pid(device), stream, "name", str("stream " + std::to_string(stream)));
    meta("thread_sort_index", gpu_pid(device), stream, "sort_index", num(stream));
  }
  for (const std::int64_t tid : unknown_api_threads_) {
    meta("thread_name", pid, tid, "name",
         str("CUDA API thread (CUPTI id " + std::to_string(tid) + ")"));
  }
  if (overhead_seen_) meta("process_name", kOverheadPid, 0, "name", str("CUPTI Overhead"));
}

void ChromeTraceSink::append_gpu_stats(const GpuStats& gpu) {
  buf_ += ", \"gpu\": {\"status\": ";
  append_json_string(&buf_, gpu.status);
  const auto n = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  append_int_members(&buf_, {{"records", n(gpu.records)},
                             {"dropped", n(gpu.dropped)},
                             {"buffers_exhausted", n(gpu.buffers_exhausted)},
                             {"filtered", n(gpu.filtered)},
                             {"starts_before_launch", n(gpu.starts_before_launch)},
                             {"attributed", n(gpu.attributed)},
                             {"unattributed", n(gpu.unattributed)},
                             {"untimed", n(gpu.untimed)},
                             {"sampled", gpu.sampled ? 1 : 0},
                             {"bursts", n(gpu.bursts)},
                             {"recorded_ns", gpu.recorded_ns}});
  buf_ += "}";
}

Status ChromeTraceSink::close(const Stats& stats, const TimeBase&) {
  append_metadata(stats, info_.start_wall_ns - base_ns_);
  buf_ += "\n  ],\n";
  append_device_properties();  // if they were not known at open
  append_distributed_info();
  buf_ += "  \"traceName\": ";
  append_json_string(&buf_, path_);
  // What the trace does not show is part of the trace: drops and ring statistics, per thread.
  buf_ += ",\n  \"gpuprobe\": {\"version\": \"" GPUPROBE_VERSION_STRING "\", \"clock\": ";
  append_json_string(&buf_, info_.clock);
  buf_ += info_.nvtx ? ", \"nvtx\": true" : ", \"nvtx\": false";
  buf_ += ", \"config\": ";
  append_json_string(&buf_, info_.config);
  const auto n = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  append_int_members(&buf_, {{"events_written", n(stats.written)},
                             {"events_dropped", n(stats.dropped)},
                             {"events_dropped_no_ring", n(stats.dropped_no_ring)},
                             {"ring_capacity", n(stats.ring_capacity)},
                             {"names_overflowed", n(stats.names_overflowed)}});
  append_gpu_stats(stats.gpu);
  buf_ += ", \"threads\": [";
  for (std::size_t i = 0; i < stats.threads.size(); ++i) {
    const ThreadInfo& t = stats.threads[i];
    buf_ += i == 0 ? "{\"name\": " : ", {\"name\": ";
    append_json_string(&buf_, t.name);
    append_int_members(&buf_, {{"tid", t.os_tid},
                               {"written", n(t.written)},
                               {"dropped", n(t.dropped)},
                               {"peak_fill", n(t.peak_fill)}});
    buf_ += "}";
  }
  buf_ += "]}\n}\n";
  return out_.commit();
}

}  // namespace gpuprobe::sinks
