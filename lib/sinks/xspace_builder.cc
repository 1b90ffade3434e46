#include "sinks/xspace_builder.h"

#include <algorithm>
#include <cstdio>

#include "formats/kineto.h"
#include "formats/steps.h"
#include "formats/tensorboard_fields.h"
#include "sinks/proto_writer.h"

namespace gpuprobe::sinks {
namespace {

using formats::api_thread_tid;

namespace xp = formats::xplane;  // field numbers

// Line ids of CUDA API calls from threads gpuprobe does not know: CUPTI's thread id, offset so
// they never meet a gettid().
constexpr std::int64_t kUnknownApiThreadLine = std::int64_t{1} << 40;

}  // namespace

struct XSpaceBuilder::Stat {
  const char* name;
  enum Kind { kInt, kDouble, kString } kind;
  std::int64_t i = 0;
  double d = 0;
  std::string s;

  static Stat integer(const char* name, std::int64_t v) { return {name, kInt, v, 0, {}}; }
  static Stat real(const char* name, double v) { return {name, kDouble, 0, v, {}}; }
  static Stat text(const char* name, std::string v) { return {name, kString, 0, 0, std::move(v)}; }
};

XSpaceBuilder::XSpaceBuilder(std::size_t max_bytes) : max_bytes_(max_bytes) {}

void XSpaceBuilder::start(const TraceInfo& info) {
  info_ = info;
  host_.id = 0;
  host_.name = "/host:CPU";
}

std::int64_t XSpaceBuilder::event_id(Plane& plane, const std::string& name) {
  const auto [it, inserted] =
      plane.event_names.try_emplace(name, static_cast<std::int64_t>(plane.event_names.size() + 1));
  return it->second;
}

std::int64_t XSpaceBuilder::stat_id(Plane& plane, const char* name) {
  const auto [it, inserted] =
      plane.stat_names.try_emplace(name, static_cast<std::int64_t>(plane.stat_names.size() + 1));
  return it->second;
}

XSpaceBuilder::Plane& XSpaceBuilder::device_plane(std::uint32_t device) {
  const auto [it, inserted] = devices_.try_emplace(device);
  Plane& plane = it->second;
  if (inserted) {
    plane.id = 1 + static_cast<std::int64_t>(device);
    plane.name = "/device:GPU:" + std::to_string(device);
    for (const DeviceInfo& d : info_.devices) {
      if (d.id != static_cast<int>(device)) continue;
      const std::pair<const char*, std::int64_t> caps[] = {
          {"core_count", d.num_sms},
          {"memory_size", static_cast<std::int64_t>(d.total_global_mem)},
          {"compute_cap_major", d.compute_major},
          {"compute_cap_minor", d.compute_minor}};
      for (const auto& [name, value] : caps) {
        std::string stat;
        ProtoWriter w(&stat, nullptr);
        w.varint(xp::stat::kMetadataId, static_cast<std::uint64_t>(stat_id(plane, name)));
        w.varint(xp::stat::kInt64, static_cast<std::uint64_t>(value));
        plane.plane_stats.emplace_back(0, std::move(stat));
      }
      std::string stat;
      ProtoWriter w(&stat, nullptr);
      w.varint(xp::stat::kMetadataId, static_cast<std::uint64_t>(stat_id(plane, "device_name")));
      w.bytes(xp::stat::kStr, d.name);
      plane.plane_stats.emplace_back(0, std::move(stat));
    }
  }
  return plane;
}

void XSpaceBuilder::add_event(Plane& plane, std::int64_t line_id, const std::string& line_name,
                              const std::string& name, std::int64_t begin_ns, std::int64_t end_ns,
                              const std::vector<Stat>& stats) {
  // An XEvent is 10-40 bytes; the limit is checked before encoding, so it is never far exceeded.
  if (bytes_ >= max_bytes_) {
    ++dropped_;
    return;
  }
  Line& line = plane.lines[line_id];
  if (line.name.empty()) line.name = line_name;
  const std::int64_t offset_ps = (begin_ns - info_.start_wall_ns) * 1000;
  const std::int64_t duration_ps = std::max<std::int64_t>(end_ns - begin_ns, 0) * 1000;
  // Encoded into buffers kept across events: no allocation per event once they have grown.
  event_.clear();
  ProtoWriter w(&event_, &scratch_);
  w.varint(xp::event::kMetadataId, static_cast<std::uint64_t>(event_id(plane, name)));
  w.varint(xp::event::kOffsetPs, static_cast<std::uint64_t>(offset_ps));
  if (duration_ps != 0) w.varint(xp::event::kDurationPs, static_cast<std::uint64_t>(duration_ps));
  for (const Stat& s : stats) {
    w.message(xp::event::kStats, [&](ProtoWriter& sw) {
      sw.varint(xp::stat::kMetadataId, static_cast<std::uint64_t>(stat_id(plane, s.name)));
      switch (s.kind) {
        case Stat::kInt:
          sw.varint(xp::stat::kInt64, static_cast<std::uint64_t>(s.i));
          break;
        case Stat::kDouble:
          sw.double_value(xp::stat::kDouble, s.d);
          break;
        case Stat::kString:
          sw.bytes(xp::stat::kStr, s.s);
          break;
      }
    });
  }
  const std::size_t before = line.events.size();
  ProtoWriter(&line.events, nullptr).bytes(xp::line::kEvents, event_);
  bytes_ += line.events.size() - before;
  line.end_ps = std::max(line.end_ps, offset_ps + duration_ps);
}

void XSpaceBuilder::add_gpu(const GpuActivity& a, const TimeBase& time,
                            const std::vector<ThreadInfo>& threads) {
  const std::int64_t begin = time.wall_ns(a.start), end = time.wall_ns(a.end);
  std::vector<Stat> stats;
  stats.push_back(Stat::integer("correlation_id", a.correlation));
  if (a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi) {
    const std::int64_t tid = api_thread_tid(a);
    std::int64_t line = tid;
    std::string line_name;
    if (a.os_tid != 0 && thread_by_tid_.count(tid) != 0) {
      line_name = threads[thread_by_tid_[tid]].name;
    } else {
      line = kUnknownApiThreadLine + tid;
      line_name = "CUDA API thread " + std::to_string(tid);
    }
    add_event(host_, line, line_name, a.name, begin, end, stats);
    return;
  }
  if (a.kind == GpuActivityKind::kOverhead) return;  // CUPTI's own time: in the Chrome trace only
  Plane& plane = device_plane(a.device);
  stats.push_back(Stat::integer("device_id", a.device));
  stats.push_back(Stat::integer("context_id", a.context));
  stats.push_back(Stat::integer("stream", a.stream));
  if (a.kind == GpuActivityKind::kKernel) {
    char details[160];
    std::snprintf(details, sizeof details,
                  "regs:%u static_shared:%d dynamic_shared:%d grid:%d,%d,%d block:%d,%d,%d",
                  a.registers_per_thread, a.static_shared_memory, a.dynamic_shared_memory,
                  a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1], a.block[2]);
    stats.push_back(Stat::text("kernel_details", details));
    if (a.declared_flops > 0) stats.push_back(Stat::real("flops", a.declared_flops));
    if (a.declared_bytes > 0) stats.push_back(Stat::real("bytes_accessed", a.declared_bytes));
  } else if (a.kind == GpuActivityKind::kMemcpy || a.kind == GpuActivityKind::kMemset) {
    const std::string details =
        std::string("kind:") +
        (a.kind == GpuActivityKind::kMemset ? "memset" : memcpy_kind_name(a.copy_kind)) +
        " size:" + std::to_string(a.bytes);
    stats.push_back(Stat::text("memcpy_details", details));
  }
  if (a.graph_id != 0) stats.push_back(Stat::integer("graph_id", a.graph_id));
  if (a.range != nullptr) stats.push_back(Stat::text("gpuprobe_range", a.range->name));
  add_event(plane, a.stream, "Stream #" + std::to_string(a.stream), a.name, begin, end, stats);
}

void XSpaceBuilder::add(const EventBatch& batch) {
  const TimeBase& time = *batch.time;
  const std::vector<ThreadInfo>& threads = *batch.threads;
  static const std::vector<Stat> kNoStats;
  for (const Event& e : batch) {
    if (e.type == EventType::kGpu) {
      add_gpu(*e.gpu, time, threads);
      continue;
    }
    if (e.type == EventType::kCounter) continue;  // counters: Chrome and Perfetto traces
    const ThreadInfo& thread = threads[e.thread];
    thread_by_tid_.emplace(thread.os_tid, e.thread);
    const std::int64_t begin = time.wall_ns(e.begin);
    const std::int64_t end = e.type == EventType::kRange ? time.wall_ns(e.end) : begin;
    if (e.site->category == Category::kStep) {
      const auto step = static_cast<std::int64_t>(e.value);
      add_event(host_, thread.os_tid, thread.name, formats::step_event_name(step), begin, end,
                {Stat::integer("step_num", step)});
      continue;
    }
    auto [it, inserted] = site_names_.try_emplace(e.site);
    if (inserted) it->second = e.site->name;
    add_event(host_, thread.os_tid, thread.name, it->second, begin, end, kNoStats);
  }
}

std::string XSpaceBuilder::encode_plane_tail(const Plane& plane) const {
  // Interned names, sorted by id so the file does not depend on hash order.
  std::vector<std::pair<std::int64_t, const std::string*>> events, stats;
  for (const auto& [name, id] : plane.event_names) events.emplace_back(id, &name);
  for (const auto& [name, id] : plane.stat_names) stats.emplace_back(id, &name);
  std::sort(events.begin(), events.end());
  std::sort(stats.begin(), stats.end());
  std::string tail;
  std::vector<std::string> scratch(3);
  ProtoWriter w(&tail, &scratch);
  // Map entries: an id, and an XEventMetadata or XStatMetadata of that id and its name.
  for (const auto* table : {&events, &stats}) {
    for (const auto& entry : *table) {
      w.message(table == &events ? xp::plane::kEventMetadata : xp::plane::kStatMetadata,
                [&](ProtoWriter& e) {
                  e.varint(xp::plane::kMapKey, static_cast<std::uint64_t>(entry.first));
                  e.message(xp::plane::kMapValue, [&](ProtoWriter& m) {
                    m.varint(xp::metadata::kId, static_cast<std::uint64_t>(entry.first));
                    m.bytes(xp::metadata::kName, *entry.second);
                  });
                });
    }
  }
  for (const auto& [unused, stat] : plane.plane_stats) w.bytes(xp::plane::kStats, stat);
  return tail;
}

Status XSpaceBuilder::write_to(base::OutputFile& out, const Stats& stats) {
  // Final thread names: set_thread_name() may have come after a thread's first events.
  for (const ThreadInfo& t : stats.threads) {
    const auto it = host_.lines.find(t.os_tid);
    if (it != host_.lines.end() && !t.name.empty()) it->second.name = t.name;
  }
  std::vector<const Plane*> planes = {&host_};
  for (const auto& [device, plane] : devices_) planes.push_back(&plane);
  std::string& buf = out.buffer();
  for (const Plane* plane : planes) {
    // Each line's header, then the plane's size, so its events go out without being copied.
    std::string head;
    ProtoWriter hw(&head, nullptr);
    hw.varint(xp::plane::kId, static_cast<std::uint64_t>(plane->id));
    hw.bytes(xp::plane::kName, plane->name);
    std::vector<std::string> line_heads;
    std::size_t plane_size = head.size();
    for (const auto& [id, line] : plane->lines) {
      std::string lh;
      ProtoWriter lw(&lh, nullptr);
      lw.varint(xp::line::kId, static_cast<std::uint64_t>(id));
      lw.bytes(xp::line::kName, line.name);
      lw.varint(xp::line::kTimestampNs, static_cast<std::uint64_t>(info_.start_wall_ns));
      lw.varint(xp::line::kDurationPs, static_cast<std::uint64_t>(line.end_ps));
      const std::size_t line_size = lh.size() + line.events.size();
      std::string framed;
      append_field_header(&framed, xp::plane::kLines, line_size);
      framed += lh;
      plane_size += framed.size() + line.events.size();
      line_heads.push_back(std::move(framed));
    }
    const std::string tail = encode_plane_tail(*plane);
    plane_size += tail.size();
    append_field_header(&buf, xp::xspace::kPlanes, plane_size);
    buf += head;
    std::size_t i = 0;
    for (const auto& [id, line] : plane->lines) {
      buf += line_heads[i++];
      buf += line.events;
      if (Status s = out.flush_if_full(); !s.ok()) return s;
    }
    buf += tail;
  }
  ProtoWriter w(&buf, nullptr);
  if (dropped_ != 0) {
    w.bytes(xp::xspace::kWarnings, "gpuprobe: " + std::to_string(dropped_) +
                                       " events left out: the XSpace reached its size limit of " +
                                       std::to_string(max_bytes_ >> 20) + " MiB");
  }
  if (stats.dropped != 0) {
    w.bytes(xp::xspace::kWarnings, "gpuprobe: " + std::to_string(stats.dropped) +
                                       " events dropped because thread rings were full");
  }
  const std::uint64_t gpu_lost = stats.gpu.dropped;
  if (gpu_lost != 0) {
    w.bytes(xp::xspace::kWarnings,
            "gpuprobe: " + std::to_string(gpu_lost) + " GPU activity records lost");
  }
  w.bytes(xp::xspace::kHostnames, base::host_name());
  return {};
}

}  // namespace gpuprobe::sinks
