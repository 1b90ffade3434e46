#include "flight/dump_writer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "base/output_file.h"
#include "core/sink_registry.h"
#include "flight/dump_directory.h"
#include "flight/window_file.h"
#include "formats/dump_description.h"
#include "gpuprobe/version.hpp"
#include "sinks/json_writer.h"

namespace gpuprobe::flight {
namespace fs = std::filesystem;
namespace dd = formats::dump_description;
namespace {

// The file each output writes inside the dump; an output registered by the program gets its key.
// The Chrome trace has a folder of its own, named as torch.profiler names its files, because
// HTA and TensorBoard's profiler plugin read every .json file of the folder they are given.
std::string file_for(const std::string& key, const TraceInfo& info) {
  if (key == "chrome") {
    return "chrome/" + base::host_name() + "_" + std::to_string(info.pid) + ".pt.trace.json";
  }
  if (key == "perfetto") return "trace.pftrace";
  if (key == kWindowFormat) return "window.gpwindow";
  if (key == "tensorboard") return "tensorboard";
  return key;
}

struct Output {
  std::string key;
  std::string file;
  std::unique_ptr<Sink> sink;
  std::string error;
};

struct ThreadSpan {
  std::uint64_t events = 0;
  std::uint64_t first = ~std::uint64_t{0};
  std::uint64_t last = 0;
};

void member(std::string* out, const char* key) {
  if (out->back() != '{') *out += ",";
  *out += "\n  ";
  sinks::append_json_string(out, key);
  *out += ": ";
}

// A member inside a one-line object: `"key": ` after `{` or `, `.
void inline_member(std::string* out, const char* key) {
  if (out->back() != '{') *out += ", ";
  sinks::append_json_string(out, key);
  *out += ": ";
}

void int_member(std::string* out, const char* key, std::int64_t v) {
  member(out, key);
  sinks::append_int(out, v);
}

void string_member(std::string* out, const char* key, const std::string& v) {
  member(out, key);
  sinks::append_json_string(out, v);
}

// dump.json: everything a reader needs to know what it is looking at, without the traces.
// With GPU bursts: the parts of the window during which GPU activity was recorded.
std::vector<std::pair<std::uint64_t, std::uint64_t>> gpu_recorded(const DumpJob& job,
                                                                  const DumpContext& c) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  bool on = false;
  std::uint64_t since = job.from_tick;
  for (const core::RecordingSwitch& s : c.gpu_switches) {
    const std::uint64_t at = std::clamp(s.tick, job.from_tick, job.to_tick);
    if (on && !s.on && at > since) spans.emplace_back(since, at);
    if (!on && s.on) since = at;
    on = s.on;
  }
  if (on && job.to_tick > since) spans.emplace_back(since, job.to_tick);
  return spans;
}

std::string describe(const DumpJob& job, const DumpContext& c, const std::vector<Output>& outputs,
                     const std::vector<ThreadSpan>& spans, std::uint64_t events,
                     std::uint64_t gpu_events) {
  const TimeBase& t = c.time;
  std::string out = "{";
  string_member(&out, dd::kFormat, dd::kFormatName);
  int_member(&out, dd::kFormatVersion, dd::kFormatVersionNumber);
  string_member(&out, dd::kGpuprobeVersion, GPUPROBE_VERSION_STRING);
  string_member(&out, dd::kName, job.name);
  string_member(&out, dd::kSource, job.source);
  string_member(&out, dd::kReason, job.reason);
  string_member(&out, dd::kTrigger, job.trigger);
  member(&out, dd::kValues);
  out += "{";
  for (std::size_t i = 0; i < job.values.size(); ++i) {
    if (i > 0) out += ", ";
    sinks::append_json_string(&out, job.values[i].first);
    out += ": ";
    sinks::append_double(&out, job.values[i].second);
  }
  out += "}";
  int_member(&out, dd::kTriggerTimeNs, t.wall_ns(job.at_tick));
  member(&out, dd::kWindow);
  out += "{";
  inline_member(&out, dd::kFromNs);
  sinks::append_int(&out, t.wall_ns(job.from_tick));
  inline_member(&out, dd::kToNs);
  sinks::append_int(&out, t.wall_ns(job.to_tick));
  inline_member(&out, dd::kBeforeS);
  sinks::append_int(&out, c.options->seconds);
  inline_member(&out, dd::kAfterS);
  sinks::append_double(&out, static_cast<double>(c.options->after_ns) / 1e9);
  inline_member(&out, dd::kAfterCutShort);
  out += job.after_cut_short ? "true}" : "false}";
  string_member(&out, dd::kHost, base::host_name());
  int_member(&out, dd::kPid, c.info.pid);
  string_member(&out, dd::kProcessName, c.info.process_name);
  int_member(&out, dd::kRank, c.info.rank);
  int_member(&out, dd::kWorldSize, c.info.world_size);
  string_member(&out, dd::kConfig, c.info.config);
  string_member(&out, dd::kClock, c.info.clock);
  member(&out, dd::kNsPerTick);
  sinks::append_double(&out, t.ns_per_tick());
  int_member(&out, dd::kSessionStartNs, c.info.start_wall_ns);
  int_member(&out, dd::kEvents, static_cast<std::int64_t>(events));
  int_member(&out, dd::kGpuEvents, static_cast<std::int64_t>(gpu_events));
  // Whether GPU activity covers the whole window, or only bursts of it (gpu_burst=).
  member(&out, dd::kGpuRecording);
  if (c.gpu_switches.empty()) {
    out += "{";
    inline_member(&out, dd::kSampled);
    out += "false}";
  } else {
    out += "{";
    inline_member(&out, dd::kSampled);
    out += "true";
    inline_member(&out, dd::kRecorded);
    out += "[";
    double seconds = 0;
    for (const auto& [from, to] : gpu_recorded(job, c)) {
      if (out.back() != '[') out += ", ";
      out += "{";
      inline_member(&out, dd::kFromNs);
      sinks::append_int(&out, t.wall_ns(from));
      inline_member(&out, dd::kToNs);
      sinks::append_int(&out, t.wall_ns(to));
      out += "}";
      seconds += static_cast<double>(t.duration_ns(from, to)) / 1e9;
    }
    out += "]";
    inline_member(&out, dd::kRecordedS);
    sinks::append_double(&out, seconds);
    out += "}";
  }
  member(&out, dd::kThreads);
  out += "[";
  bool first = true;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].events == 0) continue;
    const ThreadInfo* row = i < c.session.threads.size() ? &c.session.threads[i] : nullptr;
    out += first ? "\n    {" : ",\n    {";
    first = false;
    inline_member(&out, dd::kTid);
    sinks::append_int(&out, row ? row->os_tid : 0);
    inline_member(&out, dd::kName);
    sinks::append_json_string(&out, row ? row->name : "");
    sinks::append_int_members(&out,
                              {{dd::kEvents, static_cast<std::int64_t>(spans[i].events)},
                               {dd::kFirstNs, t.wall_ns(spans[i].first)},
                               {dd::kLastNs, t.wall_ns(spans[i].last)},
                               {dd::kDropped, row ? static_cast<std::int64_t>(row->dropped) : 0}});
    out += "}";
  }
  out += "]";
  member(&out, dd::kDrops);
  out += "{";
  inline_member(&out, dd::kEventsDropped);
  sinks::append_int(&out, static_cast<std::int64_t>(c.session.dropped));
  sinks::append_int_members(
      &out, {{dd::kEventsDroppedNoRing, static_cast<std::int64_t>(c.session.dropped_no_ring)},
             {dd::kGpuDropped, static_cast<std::int64_t>(c.session.gpu.dropped)},
             {dd::kOverwrittenByAge, static_cast<std::int64_t>(c.store.overwritten_age)},
             {dd::kOverwrittenByMemory, static_cast<std::int64_t>(c.store.overwritten_memory)}});
  out += "}";
  string_member(&out, dd::kGpuStatus, c.session.gpu.status);
  member(&out, dd::kFiles);
  out += "[";
  for (const Output& o : outputs) {
    if (!o.error.empty()) continue;
    if (out.back() != '[') out += ", ";
    sinks::append_json_string(&out, o.file);
  }
  out += "]";
  member(&out, dd::kErrors);
  out += "[";
  for (const Output& o : outputs) {
    if (o.error.empty()) continue;
    if (out.back() != '[') out += ", ";
    sinks::append_json_string(&out, o.key + ": " + o.error);
  }
  out += "]\n}\n";
  return out;
}

}  // namespace

Status write_dump(const DumpJob& job, const StoreSnapshot& snapshot, const DumpContext& c,
                  std::string* path) {
  const fs::path dir(c.options->dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("dump=" + c.options->dir + ": cannot create it: " + ec.message());
  // Written under a name nobody can guess or plant (mkdtemp: new, this user's alone), and
  // moved to its own name only when complete.
  std::string partial_name = (dir / ("." + job.name + ".partial-XXXXXX")).string();
  if (mkdtemp(partial_name.data()) == nullptr) {
    return Status::Error("dump=" + c.options->dir +
                         ": cannot create a directory in it: " + std::strerror(errno));
  }
  chmod(partial_name.c_str(), 0755);  // as mkdir with the usual umask: readable by the operator
  const fs::path partial = partial_name;

  std::vector<Output> outputs;
  Output* window = nullptr;  // the flight window file, written from the chunks, not a sink
  for (const std::string& key : c.options->formats) {
    Output o{key, file_for(key, c.info), nullptr, ""};
    if (key == kWindowFormat) {
      outputs.push_back(std::move(o));
      continue;
    }
    const fs::path target = partial / o.file;
    fs::create_directories(target.parent_path(), ec);
    if (Status s = core::SinkRegistry::get().create(key, target.string(), &o.sink); !s.ok()) {
      o.error = s.message();
    } else if (Status s = o.sink->open(c.info); !s.ok()) {
      o.error = s.message();
    }
    outputs.push_back(std::move(o));
  }
  for (Output& o : outputs) {
    if (o.key == kWindowFormat) window = &o;
  }
  std::vector<ThreadInfo> rows = c.session.threads;
  std::vector<ThreadSpan> spans(rows.size());
  std::uint64_t events = 0;
  std::uint64_t gpu_events = 0;
  const auto write_all = [&](const std::vector<Event>& batch) {
    std::uint32_t max_thread = 0;
    for (const Event& e : batch) {
      ++events;
      if (e.type == EventType::kGpu) {
        ++gpu_events;
        continue;
      }
      max_thread = std::max(max_thread, e.thread);
      if (e.thread >= spans.size()) spans.resize(e.thread + 1);
      ThreadSpan& span = spans[e.thread];
      ++span.events;
      span.first = std::min(span.first, e.begin);
      span.last = std::max(span.last, std::max(e.begin, e.end));
    }
    if (max_thread >= rows.size()) rows.resize(max_thread + 1);
    const EventBatch b{batch.data(), batch.size(), &c.time, &rows};
    for (Output& o : outputs) {
      if (!o.error.empty() || o.sink == nullptr) continue;
      if (Status s = o.sink->write(b); !s.ok()) o.error = s.message();
    }
  };
  // The GPU recording counter's value where the window starts, which the switch before the
  // window set: without it the dump's counter would begin only at the window's first switch.
  std::vector<Event> added;  // events of the dump's own, around the window's
  if (!c.gpu_switches.empty() && c.gpu_switches.front().tick < job.from_tick) {
    added.push_back(Event{EventType::kCounter, c.gpu_switch_row, &core::kGpuRecordingSite,
                          job.from_tick, job.from_tick, c.gpu_switches.front().on ? 1.0 : 0.0});
    write_all({added.back()});
  }
  decode(snapshot, job.from_tick, job.to_tick, write_all);
  // The moment the dump was asked for, as an instant on the timeline.
  const std::string marker_name = "gpuprobe dump: " + job.reason;
  const CallSite marker{marker_name.c_str(), "", "", 0, 0xFFE15759, Category::kApp};
  if (!rows.empty()) {
    const std::uint32_t thread = job.thread < rows.size() ? job.thread : 0;
    added.push_back(Event{EventType::kInstant, thread, &marker, job.at_tick, job.at_tick, 0.0});
    write_all({added.back()});
  }

  Stats stats = c.session;
  stats.threads = rows;
  stats.written = 0;
  for (std::size_t i = 0; i < stats.threads.size(); ++i) {
    stats.threads[i].written = i < spans.size() ? spans[i].events : 0;
    stats.written += stats.threads[i].written;
  }
  stats.gpu.records = gpu_events;
  for (Output& o : outputs) {
    if (!o.error.empty() || o.sink == nullptr) continue;
    if (Status s = o.sink->close(stats, c.time); !s.ok()) o.error = s.message();
  }
  if (window != nullptr) {
    const WindowFacts facts{c.info, c.time, stats, job.from_tick, job.to_tick};
    if (Status s = write_window_file((partial / window->file).string(), snapshot, added, facts);
        !s.ok()) {
      window->error = s.message();
    }
  }
  const bool any =
      std::any_of(outputs.begin(), outputs.end(), [](const Output& o) { return o.error.empty(); });
  base::OutputFile description;
  Status s = description.open((partial / dd::kFileName).string());
  if (s.ok()) s = description.write(describe(job, c, outputs, spans, events, gpu_events));
  if (s.ok()) s = description.commit();
  if (!s.ok() || !any) {
    fs::remove_all(partial, ec);
    return Status::Error(
        "dump " + job.name + ": " +
        (!s.ok() ? s.message() : "no output could be written: " + outputs.front().error));
  }
  fs::path final_path = dir / job.name;
  bool placed = base::rename_no_replace(partial.string(), final_path.string());
  for (int n = 2; !placed && errno == EEXIST && n < 100; ++n) {
    final_path = dir / (job.name + "-" + std::to_string(n));
    placed = base::rename_no_replace(partial.string(), final_path.string());
  }
  if (!placed) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    return Status::Error("dump " + job.name + ": cannot rename it into place: " + why);
  }
  *path = final_path.string();
  return {};
}

}  // namespace gpuprobe::flight
