#include "sinks/perfetto_sink.h"

#include <time.h>

#include <array>
#include <cstring>
#include <type_traits>

#include "formats/category_names.h"
#include "formats/kineto.h"
#include "formats/perfetto_fields.h"
#include "formats/steps.h"
#include "sinks/perfetto_tracks.h"

namespace gpuprobe::sinks {
namespace {

using namespace formats::perfetto;  // field numbers
using namespace perfetto_tracks;
using formats::chrome_gpu_category;
using formats::starts_flow;

std::int64_t read_clock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

PerfettoSink::PerfettoSink(std::string path) : path_(std::move(path)), scratch_(8) {
  process_seq_.id = 1;
}

Status PerfettoSink::open(const TraceInfo& info) {
  info_ = info;
  base_ns_ = info.start_wall_ns;
  path_ = base::expand_path(path_);
  if (Status s = out_.open(path_); !s.ok()) return s;
  start_sequence(process_seq_, 0);
  // Wall time against the clocks trace_processor aligns traces on.
  ProtoWriter(&buf_, &scratch_).message(kTracePacket, [&](ProtoWriter& p) {
    const std::int64_t realtime = read_clock(CLOCK_REALTIME);
    const std::int64_t boottime = read_clock(CLOCK_BOOTTIME);
    const std::int64_t monotonic = read_clock(CLOCK_MONOTONIC);
    p.message(packet::kClockSnapshot, [&](ProtoWriter& c) {
      const std::pair<std::uint32_t, std::int64_t> clocks[] = {
          {kClockRealtime, realtime}, {kClockBoottime, boottime}, {kClockMonotonic, monotonic}};
      for (const auto& clock : clocks) {
        c.message(clock_snapshot::kClocks, [&](ProtoWriter& k) {
          k.varint(clock_snapshot::kClockId, clock.first);
          k.varint(clock_snapshot::kTimestamp, static_cast<std::uint64_t>(clock.second));
        });
      }
    });
  });
  ProtoWriter(&buf_, &scratch_).message(kTracePacket, [&](ProtoWriter& p) {
    p.message(packet::kTrackDescriptor, [&](ProtoWriter& d) {
      d.varint(descriptor::kUuid, kProcessTrack);
      d.message(descriptor::kProcess, [&](ProtoWriter& proc) {
        proc.varint(descriptor::kProcessPid, static_cast<std::uint64_t>(info.pid));
        proc.bytes(descriptor::kProcessName, info.process_name);
      });
    });
  });
  write_devices();
  return {};
}

void PerfettoSink::start_sequence(Sequence& seq, std::uint64_t default_track) {
  seq.started = true;
  ProtoWriter(&buf_, &scratch_).message(kTracePacket, [&](ProtoWriter& p) {
    p.varint(packet::kSequenceId, seq.id);
    p.varint(packet::kSequenceFlags, kSeqIncrementalStateCleared);
    // The sequence's clock: 0 at the session's start.
    p.message(packet::kClockSnapshot, [&](ProtoWriter& c) {
      c.message(clock_snapshot::kClocks, [&](ProtoWriter& k) {
        k.varint(clock_snapshot::kClockId, kSessionClock);
        k.varint(clock_snapshot::kTimestamp, 0);
      });
      c.message(clock_snapshot::kClocks, [&](ProtoWriter& k) {
        k.varint(clock_snapshot::kClockId, kClockRealtime);
        k.varint(clock_snapshot::kTimestamp, static_cast<std::uint64_t>(base_ns_));
      });
    });
    p.message(packet::kDefaults, [&](ProtoWriter& d) {
      d.varint(defaults::kTimestampClockId, kSessionClock);
      if (default_track != 0) {
        d.message(defaults::kTrackEventDefaults,
                  [&](ProtoWriter& t) { t.varint(defaults::kTrackUuid, default_track); });
      }
    });
  });
}

void PerfettoSink::track_descriptor(std::uint64_t uuid, std::uint64_t parent,
                                    const std::string& name, const ThreadInfo* thread,
                                    std::int64_t tid, bool counter, bool no_merge) {
  ProtoWriter(&buf_, &scratch_).message(kTracePacket, [&](ProtoWriter& p) {
    p.message(packet::kTrackDescriptor, [&](ProtoWriter& d) {
      d.varint(descriptor::kUuid, uuid);
      if (parent != 0) d.varint(descriptor::kParentUuid, parent);
      if (thread != nullptr || tid != 0) {
        d.message(descriptor::kThread, [&](ProtoWriter& t) {
          t.varint(descriptor::kThreadPid, static_cast<std::uint64_t>(info_.pid));
          t.varint(descriptor::kThreadTid,
                   static_cast<std::uint64_t>(thread != nullptr ? thread->os_tid : tid));
          t.bytes(descriptor::kThreadName, name);
        });
      } else {
        d.bytes(descriptor::kName, name);
      }
      if (counter) d.message(descriptor::kCounter, [](ProtoWriter&) {});
      // One track per stream, always: never merged with a sibling of the same name.
      if (no_merge) d.varint(descriptor::kSiblingMergeBehavior, descriptor::kSiblingMergeNone);
    });
  });
}

PerfettoSink::Sequence& PerfettoSink::thread_sequence(std::uint32_t thread,
                                                      const std::vector<ThreadInfo>& threads) {
  if (thread >= thread_seqs_.size()) thread_seqs_.resize(thread + 1);
  Sequence& seq = thread_seqs_[thread];
  if (!seq.started) {
    seq.id = 2 + thread;
    const ThreadInfo& info = threads[thread];
    thread_index_[info.os_tid] = thread;
    track_descriptor(thread_track(thread), 0, info.name, &info, 0, false, false);
    start_sequence(seq, thread_track(thread));
  }
  return seq;
}

std::size_t PerfettoSink::encode_simple_event(char* out, std::uint32_t sequence, std::uint64_t ts,
                                              int type, std::uint64_t track, std::uint64_t name_iid,
                                              std::uint64_t category_iid, const double* counter) {
  // Most packets are a slice's BEGIN or END, an instant or a counter value, with names already
  // interned: sizes are computed first, so the packet is encoded front to back, straight into
  // the caller's stack buffer (at most kMaxSimplePacket bytes).
  constexpr std::uint64_t kTypeTag = event::kType << 3, kTrackTag = event::kTrackUuid << 3,
                          kNameTag = event::kNameIid << 3, kCategoryTag = event::kCategoryIids << 3,
                          kCounterTag = event::kDoubleCounterValue << 3 | 1;
  const auto field_size = [](std::uint64_t tag, std::uint64_t v) {
    return varint_size(tag) + varint_size(v);
  };
  std::size_t event_size = field_size(kTypeTag, static_cast<std::uint64_t>(type));
  if (track != 0) event_size += field_size(kTrackTag, track);
  if (name_iid != 0) event_size += field_size(kNameTag, name_iid);
  if (category_iid != 0) event_size += field_size(kCategoryTag, category_iid);
  if (counter != nullptr) event_size += varint_size(kCounterTag) + 8;
  const bool interned = name_iid != 0 || category_iid != 0;
  const std::size_t packet_size =
      field_size(packet::kTimestamp << 3, ts) + field_size(packet::kSequenceId << 3, sequence) +
      field_size(packet::kTrackEvent << 3 | 2, event_size) + event_size +
      (interned ? field_size(packet::kSequenceFlags << 3, kSeqNeedsIncrementalState) : 0);
  std::size_t n = 0;
  put_varint(out, n, kTracePacket << 3 | 2);
  put_varint(out, n, packet_size);
  put_varint(out, n, packet::kTimestamp << 3);
  put_varint(out, n, ts);
  put_varint(out, n, packet::kSequenceId << 3);
  put_varint(out, n, sequence);
  put_varint(out, n, packet::kTrackEvent << 3 | 2);
  put_varint(out, n, event_size);
  put_varint(out, n, kTypeTag);
  put_varint(out, n, static_cast<std::uint64_t>(type));
  if (track != 0) {
    put_varint(out, n, kTrackTag);
    put_varint(out, n, track);
  }
  if (name_iid != 0) {
    put_varint(out, n, kNameTag);
    put_varint(out, n, name_iid);
  }
  if (category_iid != 0) {
    put_varint(out, n, kCategoryTag);
    put_varint(out, n, category_iid);
  }
  if (counter != nullptr) {
    put_varint(out, n, kCounterTag);
    std::memcpy(out + n, counter, 8);  // fixed64, little-endian hosts
    n += 8;
  }
  if (interned) {
    put_varint(out, n, packet::kSequenceFlags << 3);
    put_varint(out, n, kSeqNeedsIncrementalState);
  }
  return n;
}

namespace {

// The iid `key` has in `interned`, or 0: first in `recent`, a direct-mapped cache by address in
// front of the map, since most events repeat a name seen lately.
std::uint64_t find_interned(const std::unordered_map<const void*, std::uint64_t>& interned,
                            std::array<std::pair<const void*, std::uint64_t>, 64>& recent,
                            const void* key) {
  // The address's bits mixed (Fibonacci hashing: the product's top 6 bits pick one of the 64
  // slots), so that string literals a few bytes apart take different slots.
  static_assert(std::tuple_size_v<std::remove_reference_t<decltype(recent)>> == 64);
  auto& slot = recent[(reinterpret_cast<std::uintptr_t>(key) * 0x9E3779B97F4A7C15u) >> 58];
  if (slot.first == key) return slot.second;
  const auto it = interned.find(key);
  if (it == interned.end()) return 0;
  slot = {key, it->second};
  return it->second;
}

}  // namespace

std::uint64_t PerfettoSink::interned_name(Sequence& seq, const char* name) {
  return find_interned(seq.names, seq.recent_names, name);
}

std::uint64_t PerfettoSink::interned_annotation_name(Sequence& seq, const char* name) {
  return find_interned(seq.annotation_names, seq.recent_annotation_names, name);
}

bool PerfettoSink::append_annotated_event(Sequence& seq, std::uint64_t ts, int type,
                                          std::uint64_t track, std::uint64_t name_iid,
                                          std::uint64_t category_iid,
                                          const std::vector<Annotation>& annotations,
                                          std::uint64_t flow, std::uint64_t terminating_flow) {
  const auto field_size = [](std::uint32_t field, std::uint64_t v) {
    return varint_size(std::uint64_t{field} << 3) + varint_size(v);
  };
  const auto put_field = [](char* out, std::size_t& n, std::uint32_t field, int wire_type,
                            std::uint64_t v) {
    put_varint(out, n, std::uint64_t{field} << 3 | static_cast<std::uint64_t>(wire_type));
    put_varint(out, n, v);
  };
  constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2;
  // Sizes first: each annotation's, then the event's, then the packet's.
  std::array<std::uint64_t, 64> iids;
  std::array<std::size_t, 64> annotation_sizes;
  std::array<std::size_t, 64> string_lengths;  // of kString values, measured once
  if (annotations.size() > iids.size()) return false;
  std::size_t event_size = field_size(event::kType, static_cast<std::uint64_t>(type)) +
                           field_size(event::kTrackUuid, track) +
                           field_size(event::kNameIid, name_iid) +
                           field_size(event::kCategoryIids, category_iid);
  if (flow != 0) event_size += varint_size(std::uint64_t{event::kFlowIds} << 3) + 8;
  if (terminating_flow != 0) {
    event_size += varint_size(std::uint64_t{event::kTerminatingFlowIds} << 3) + 8;
  }
  for (std::size_t i = 0; i < annotations.size(); ++i) {
    const Annotation& a = annotations[i];
    iids[i] = interned_annotation_name(seq, a.name);
    if (iids[i] == 0) return false;
    std::size_t size = field_size(annotation::kNameIid, iids[i]);
    switch (a.kind) {
      case Annotation::kInt:
        size += field_size(annotation::kIntValue, static_cast<std::uint64_t>(a.i));
        break;
      case Annotation::kDouble:
        size += varint_size(std::uint64_t{annotation::kDoubleValue} << 3) + 8;
        break;
      case Annotation::kString: {
        const std::size_t length = string_lengths[i] = std::strlen(a.s);
        if (length > kMaxAnnotatedPacket) return false;
        size += field_size(annotation::kStringValue, length) + length;
        break;
      }
    }
    annotation_sizes[i] = size;
    event_size += field_size(event::kDebugAnnotations, size) + size;
  }
  const std::size_t packet_size = field_size(packet::kTimestamp, ts) +
                                  field_size(packet::kSequenceId, seq.id) +
                                  field_size(packet::kTrackEvent, event_size) + event_size +
                                  field_size(packet::kSequenceFlags, kSeqNeedsIncrementalState);
  if (field_size(kTracePacket, packet_size) + packet_size > kMaxAnnotatedPacket) return false;
  char out[kMaxAnnotatedPacket];
  std::size_t n = 0;
  put_field(out, n, kTracePacket, kLengthDelimited, packet_size);
  put_field(out, n, packet::kTimestamp, kVarint, ts);
  put_field(out, n, packet::kSequenceId, kVarint, seq.id);
  put_field(out, n, packet::kTrackEvent, kLengthDelimited, event_size);
  put_field(out, n, event::kType, kVarint, static_cast<std::uint64_t>(type));
  put_field(out, n, event::kTrackUuid, kVarint, track);
  put_field(out, n, event::kNameIid, kVarint, name_iid);
  put_field(out, n, event::kCategoryIids, kVarint, category_iid);
  for (const auto& [field, id] : {std::pair{event::kFlowIds, flow},
                                  std::pair{event::kTerminatingFlowIds, terminating_flow}}) {
    if (id == 0) continue;
    put_varint(out, n, std::uint64_t{field} << 3 | kFixed64);
    std::memcpy(out + n, &id, 8);  // fixed64, little-endian hosts
    n += 8;
  }
  for (std::size_t i = 0; i < annotations.size(); ++i) {
    const Annotation& a = annotations[i];
    put_field(out, n, event::kDebugAnnotations, kLengthDelimited, annotation_sizes[i]);
    put_field(out, n, annotation::kNameIid, kVarint, iids[i]);
    switch (a.kind) {
      case Annotation::kInt:
        put_field(out, n, annotation::kIntValue, kVarint, static_cast<std::uint64_t>(a.i));
        break;
      case Annotation::kDouble:
        put_varint(out, n, std::uint64_t{annotation::kDoubleValue} << 3 | kFixed64);
        std::memcpy(out + n, &a.d, 8);
        n += 8;
        break;
      case Annotation::kString: {
        const std::size_t length = string_lengths[i];
        put_field(out, n, annotation::kStringValue, kLengthDelimited, length);
        std::memcpy(out + n, a.s, length);
        n += length;
        break;
      }
    }
  }
  put_field(out, n, packet::kSequenceFlags, kVarint, kSeqNeedsIncrementalState);
  buf_.append(out, n);
  return true;
}

void PerfettoSink::track_event(Sequence& seq, std::int64_t wall_ns, int type, std::uint64_t track,
                               const char* name, bool intern_name, int category,
                               const std::vector<Annotation>& annotations, std::uint64_t flow,
                               std::uint64_t terminating_flow, const double* counter) {
  // Names new to this sequence travel in the same packet as their first use.
  std::uint64_t name_iid = 0;
  bool new_name = false;
  if (name != nullptr && intern_name) {
    name_iid = interned_name(seq, name);
    if (name_iid == 0) {
      name_iid = seq.names.size() + 1;
      seq.names.emplace(name, name_iid);
      new_name = true;
    }
  }
  std::uint64_t category_iid = 0;
  bool new_category = false;
  std::string category_name;
  if (category >= 0) {
    const auto [it, inserted] = seq.categories.try_emplace(category, seq.categories.size() + 1);
    category_iid = it->second;
    new_category = inserted;
    if (inserted) {
      category_name =
          category >= kGpuCategories
              ? chrome_gpu_category(static_cast<GpuActivityKind>(category - kGpuCategories))
              : std::string(
                    formats::category_name(static_cast<Category>(category), info_.category_names));
    }
  }
  if (annotations.empty() && flow == 0 && terminating_flow == 0 && !new_name && !new_category &&
      wall_ns >= base_ns_ && (name == nullptr || intern_name)) {
    char out[kMaxSimplePacket];
    buf_.append(
        out, encode_simple_event(out, seq.id, static_cast<std::uint64_t>(wall_ns - base_ns_), type,
                                 track, name_iid, category_iid, counter));
    return;
  }
  std::vector<std::pair<const char*, std::uint64_t>> new_annotations;
  ProtoWriter(&buf_, &scratch_).message(kTracePacket, [&](ProtoWriter& p) {
    if (wall_ns >= base_ns_) {
      p.varint(packet::kTimestamp, static_cast<std::uint64_t>(wall_ns - base_ns_));
    } else {  // before the session clock's origin: absolute wall time
      p.varint(packet::kTimestamp, static_cast<std::uint64_t>(wall_ns));
      p.varint(packet::kTimestampClockId, kClockRealtime);
    }
    p.varint(packet::kSequenceId, seq.id);
    p.message(packet::kTrackEvent, [&](ProtoWriter& e) {
      e.varint(event::kType, static_cast<std::uint64_t>(type));
      if (track != 0) e.varint(event::kTrackUuid, track);
      if (name_iid != 0) e.varint(event::kNameIid, name_iid);
      if (name != nullptr && !intern_name) e.bytes(event::kName, name);
      if (category_iid != 0) e.varint(event::kCategoryIids, category_iid);
      if (counter != nullptr) e.double_value(event::kDoubleCounterValue, *counter);
      if (flow != 0) e.fixed64(event::kFlowIds, flow);
      if (terminating_flow != 0) e.fixed64(event::kTerminatingFlowIds, terminating_flow);
      for (const Annotation& a : annotations) {
        const auto inserted =
            seq.annotation_names.try_emplace(a.name, seq.annotation_names.size() + 1);
        const std::uint64_t iid = inserted.first->second;
        if (inserted.second) new_annotations.emplace_back(a.name, iid);
        e.message(event::kDebugAnnotations, [&](ProtoWriter& d) {
          d.varint(annotation::kNameIid, iid);
          if (a.kind == Annotation::kInt)
            d.varint(annotation::kIntValue, static_cast<std::uint64_t>(a.i));
          if (a.kind == Annotation::kDouble) d.double_value(annotation::kDoubleValue, a.d);
          if (a.kind == Annotation::kString) d.bytes(annotation::kStringValue, a.s);
        });
      }
    });
    if (new_name || new_category || !new_annotations.empty()) {
      p.message(packet::kInternedData, [&](ProtoWriter& i) {
        if (new_category) {
          i.message(interned::kEventCategories, [&](ProtoWriter& c) {
            c.varint(interned::kIid, category_iid);
            c.bytes(interned::kEntryName, category_name);
          });
        }
        if (new_name) {
          i.message(interned::kEventNames, [&](ProtoWriter& n) {
            n.varint(interned::kIid, name_iid);
            n.bytes(interned::kEntryName, name);
          });
        }
        for (const auto& annotation : new_annotations) {
          i.message(interned::kDebugAnnotationNames, [&](ProtoWriter& n) {
            n.varint(interned::kIid, annotation.second);
            n.bytes(interned::kEntryName, annotation.first);
          });
        }
      });
    }
    if (name_iid != 0 || category_iid != 0 || !annotations.empty()) {
      p.varint(packet::kSequenceFlags, kSeqNeedsIncrementalState);
    }
  });
}

std::uint64_t PerfettoSink::counter_track(const CallSite* site) {
  const auto [it, inserted] = counters_.try_emplace(site, counter_uuid(counters_.size()));
  if (inserted) track_descriptor(it->second, kProcessTrack, site->name, nullptr, 0, true, false);
  return it->second;
}

void PerfettoSink::write_cpu_event(const Event& e, const TimeBase& time,
                                   const std::vector<ThreadInfo>& threads) {
  Sequence& seq = thread_sequence(e.thread, threads);
  const std::int64_t begin = time.wall_ns(e.begin);
  // gpuprobe's own name for the default category costs nothing: only others are written.
  const int category = e.site->category == Category::kApp ? -1 : static_cast<int>(e.site->category);
  static const std::vector<Annotation> kNone;
  switch (e.type) {
    case EventType::kRange:
      if (e.site->category == Category::kStep) {
        const std::string name = formats::step_event_name(static_cast<std::int64_t>(e.value));
        track_event(seq, begin, event::kSliceBegin, 0, name.c_str(), false, category, kNone, 0, 0,
                    nullptr);
      } else if (const std::uint64_t iid = interned_name(seq, e.site->name);
                 iid != 0 && category < 0 && begin >= base_ns_) {
        // The common case, a range of the default category whose name the sequence knows: both
        // packets encoded into one buffer and appended at once.
        const std::int64_t end = time.wall_ns(e.end);
        char out[2 * kMaxSimplePacket];
        std::size_t n =
            encode_simple_event(out, seq.id, static_cast<std::uint64_t>(begin - base_ns_),
                                event::kSliceBegin, 0, iid, 0, nullptr);
        n += encode_simple_event(out + n, seq.id, static_cast<std::uint64_t>(end - base_ns_),
                                 event::kSliceEnd, 0, 0, 0, nullptr);
        buf_.append(out, n);
        break;
      } else {
        track_event(seq, begin, event::kSliceBegin, 0, e.site->name, true, category, kNone, 0, 0,
                    nullptr);
      }
      track_event(seq, time.wall_ns(e.end), event::kSliceEnd, 0, nullptr, false, -1, kNone, 0, 0,
                  nullptr);
      break;
    case EventType::kInstant:
      track_event(seq, begin, event::kInstant, 0, e.site->name, true, category, kNone, 0, 0,
                  nullptr);
      break;
    case EventType::kCounter:
      // Its category on each value, as on slices (a counter track has none of its own).
      track_event(seq, begin, event::kCounter, counter_track(e.site), nullptr, false, category,
                  kNone, 0, 0, &e.value);
      break;
    case EventType::kGpu:
      break;  // write_gpu_event()
  }
}

Status PerfettoSink::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    if (e.type == EventType::kGpu) {
      write_gpu_event(*e.gpu, *batch.time);
    } else {
      write_cpu_event(e, *batch.time, *batch.threads);
    }
    if (Status s = out_.flush_if_full(); !s.ok()) return s;
  }
  return {};
}

// Devices and the rank a reader learned only at the end of its input are written at close.
void PerfettoSink::update_info(const TraceInfo& info) { adopt_trace_info(info_, info); }

Status PerfettoSink::close(const Stats& stats, const TimeBase&) {
  // Final thread names (set_thread_name may have come after a thread's first events).
  for (std::uint32_t i = 0; i < stats.threads.size() && i < thread_seqs_.size(); ++i) {
    if (thread_seqs_[i].started)
      track_descriptor(thread_track(i), 0, stats.threads[i].name, &stats.threads[i], 0, false,
                       false);
  }
  write_devices();  // if they were not known at open
  // What the trace does not show is part of the trace: an instant on the process track, with
  // every field the Chrome trace's "gpuprobe" block has (a conversion keeps them all).
  const auto n = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  const GpuStats& gpu = stats.gpu;
  const std::vector<Annotation> summary = {
      {"clock", Annotation::kString, 0, 0, info_.clock.c_str()},
      {"nvtx", Annotation::kInt, info_.nvtx ? 1 : 0, 0, nullptr},
      {"config", Annotation::kString, 0, 0, info_.config.c_str()},
      {"rank", Annotation::kInt, info_.rank, 0, nullptr},
      {"world_size", Annotation::kInt, info_.world_size, 0, nullptr},
      {"events_written", Annotation::kInt, n(stats.written), 0, nullptr},
      {"events_dropped", Annotation::kInt, n(stats.dropped), 0, nullptr},
      {"events_dropped_no_ring", Annotation::kInt, n(stats.dropped_no_ring), 0, nullptr},
      {"ring_capacity", Annotation::kInt, n(stats.ring_capacity), 0, nullptr},
      {"names_overflowed", Annotation::kInt, n(stats.names_overflowed), 0, nullptr},
      {"gpu_status", Annotation::kString, 0, 0, gpu.status.c_str()},
      {"gpu_records", Annotation::kInt, n(gpu.records), 0, nullptr},
      {"gpu_dropped", Annotation::kInt, n(gpu.dropped), 0, nullptr},
      {"gpu_buffers_exhausted", Annotation::kInt, n(gpu.buffers_exhausted), 0, nullptr},
      {"gpu_filtered", Annotation::kInt, n(gpu.filtered), 0, nullptr},
      {"gpu_starts_before_launch", Annotation::kInt, n(gpu.starts_before_launch), 0, nullptr},
      {"gpu_attributed", Annotation::kInt, n(gpu.attributed), 0, nullptr},
      {"gpu_unattributed", Annotation::kInt, n(gpu.unattributed), 0, nullptr},
      {"gpu_untimed", Annotation::kInt, n(gpu.untimed), 0, nullptr},
      {"gpu_sampled", Annotation::kInt, gpu.sampled ? 1 : 0, 0, nullptr},
      {"gpu_bursts", Annotation::kInt, n(gpu.bursts), 0, nullptr},
      {"gpu_recorded_ns", Annotation::kInt, gpu.recorded_ns, 0, nullptr}};
  track_event(process_seq_, read_clock(CLOCK_REALTIME), event::kInstant, kProcessTrack,
              "gpuprobe stats", false, -1, summary, 0, 0, nullptr);
  return out_.commit();
}

}  // namespace gpuprobe::sinks
