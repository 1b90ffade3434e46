#include "readers/perfetto_messages.h"

#include "formats/device_properties.h"
#include "formats/perfetto_fields.h"
#include "formats/saturate.h"
#include "readers/proto_view.h"

namespace gpuprobe::readers::perfetto {

using namespace formats::perfetto;

Track decode_track_descriptor(std::string_view bytes, std::uint64_t* uuid) {
  ProtoView d(bytes);
  Track t;
  *uuid = 0;
  while (d.next()) {
    switch (d.field()) {
      case descriptor::kUuid:
        *uuid = d.u64();
        break;
      case descriptor::kName:
        t.name = std::string(d.bytes());
        break;
      case descriptor::kParentUuid:
        t.parent = d.u64();
        break;
      case descriptor::kCounter:
        t.counter = true;
        break;
      case descriptor::kProcess:
      case descriptor::kThread: {
        const bool thread = d.field() == descriptor::kThread;
        (thread ? t.thread : t.process) = true;
        ProtoView p(d.bytes());
        while (p.next()) {
          if (p.field() == descriptor::kProcessPid) t.pid = p.i64();  // = kThreadPid
          if (thread && p.field() == descriptor::kThreadTid) t.tid = p.i64();
          if ((thread && p.field() == descriptor::kThreadName) ||
              (!thread && p.field() == descriptor::kProcessName))
            t.name = std::string(p.bytes());
        }
        break;
      }
      default:
        break;
    }
  }
  return t;
}

Annotation decode_annotation(std::string_view bytes,
                             const std::unordered_map<std::uint64_t, std::string>& names) {
  Annotation a;
  ProtoView d(bytes);
  while (d.next()) {
    switch (d.field()) {
      case annotation::kNameIid: {
        const auto it = names.find(d.u64());
        if (it != names.end()) a.name = it->second;
        break;
      }
      case annotation::kName:
        a.name = std::string(d.bytes());
        break;
      case annotation::kBoolValue:
      case annotation::kUintValue:
        a.number = static_cast<double>(d.u64());
        break;
      case annotation::kIntValue:
        a.number = static_cast<double>(d.i64());
        break;
      case annotation::kDoubleValue:
        a.number = d.f64();
        break;
      case annotation::kStringValue:
        a.is_string = true;
        a.text = std::string(d.bytes());
        break;
      default:
        break;
    }
  }
  return a;
}

void decode_clock_snapshot(std::string_view bytes, ClockPairs* out) {
  std::map<std::uint32_t, std::int64_t> values;
  ProtoView snap(bytes);
  while (snap.next()) {
    if (snap.field() != clock_snapshot::kClocks) continue;
    ProtoView clock(snap.bytes());
    std::uint32_t id = 0;
    std::int64_t value = 0;
    while (clock.next()) {
      if (clock.field() == clock_snapshot::kClockId) id = static_cast<std::uint32_t>(clock.u64());
      if (clock.field() == clock_snapshot::kTimestamp) value = clock.i64();
    }
    values[id] = value;
  }
  const auto real = values.find(kClockRealtime);
  if (real == values.end()) return;
  for (const auto& [id, value] : values) (*out)[id] = {value, real->second};
}

void decode_defaults(std::string_view bytes, std::uint32_t* clock, std::uint64_t* track) {
  ProtoView d(bytes);
  while (d.next()) {
    if (d.field() == defaults::kTimestampClockId) *clock = static_cast<std::uint32_t>(d.u64());
    if (d.field() == defaults::kTrackEventDefaults) {
      ProtoView t(d.bytes());
      while (t.next()) {
        if (t.field() == defaults::kTrackUuid) *track = t.u64();
      }
    }
  }
}

void apply_stats(const std::vector<Annotation>& annotations, TraceInfo* info, Stats* stats) {
  for (const Annotation& a : annotations) {
    const auto u = formats::saturate<std::uint64_t>(a.number);
    if (a.name == "events_dropped") stats->dropped = u;
    if (a.name == "events_dropped_no_ring") stats->dropped_no_ring = u;
    if (a.name == "ring_capacity") stats->ring_capacity = u;
    if (a.name == "names_overflowed") stats->names_overflowed = u;
    if (a.name == "clock") info->clock = a.text;
    if (a.name == "nvtx") info->nvtx = u != 0;
    if (a.name == "config") info->config = a.text;
    // Numbers, -1 for a trace of no rank; a file's larger values saturate.
    if (a.name == "rank") info->rank = formats::saturate<int>(a.number);
    if (a.name == "world_size") info->world_size = formats::saturate<int>(a.number);
    if (a.name == "gpu_status") stats->gpu.status = a.text;
    if (a.name == "gpu_records") stats->gpu.records = u;
    if (a.name == "gpu_dropped") stats->gpu.dropped = u;
    if (a.name == "gpu_buffers_exhausted") stats->gpu.buffers_exhausted = u;
    if (a.name == "gpu_filtered") stats->gpu.filtered = u;
    if (a.name == "gpu_starts_before_launch") stats->gpu.starts_before_launch = u;
    if (a.name == "gpu_attributed") stats->gpu.attributed = u;
    if (a.name == "gpu_unattributed") stats->gpu.unattributed = u;
    if (a.name == "gpu_untimed") stats->gpu.untimed = u;
    if (a.name == "gpu_sampled") stats->gpu.sampled = u != 0;
    if (a.name == "gpu_bursts") stats->gpu.bursts = u;
    if (a.name == "gpu_recorded_ns") stats->gpu.recorded_ns = static_cast<std::int64_t>(u);
  }
}

DeviceInfo decode_device(const std::vector<Annotation>& annotations) {
  DeviceInfo d;
  for (const Annotation& a : annotations) {
    if (a.is_string) {
      if (a.name == "name") d.name = a.text;
    } else if (const formats::DeviceProperty* p = formats::find_device_property(a.name.c_str())) {
      p->set(d, formats::saturate<std::int64_t>(a.number));
    }
  }
  return d;
}

}  // namespace gpuprobe::readers::perfetto
