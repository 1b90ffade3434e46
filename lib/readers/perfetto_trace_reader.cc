#include "readers/perfetto_trace_reader.h"

#include <cstring>
#include <string>
#include <vector>

#include <unordered_map>

#include "formats/device_properties.h"
#include "formats/gpu_args.h"
#include "formats/kineto.h"
#include "formats/perfetto_fields.h"
#include "formats/steps.h"
#include "readers/perfetto_messages.h"
#include "readers/proto_view.h"
#include "readers/trace_builder.h"

namespace gpuprobe::readers {
namespace {

// The instant gpuprobe's Perfetto sink closes a trace with: the session's statistics.
constexpr std::string_view kStatsName = "gpuprobe stats";

using namespace formats::perfetto;  // field numbers
using namespace perfetto;           // the messages' decoders
constexpr std::size_t kMaxPacket = 64 << 20;
constexpr std::size_t kMaxDepth = 1024;
constexpr std::size_t kMaxDevices = 1024;  // per trace: more is a hostile file

// A category as the reader uses it, resolved once per interned category.
struct CategoryInfo {
  int gpu_kind = -1;  // a GpuActivityKind for GPU work and API calls, else -1
  Category category = Category::kApp;
};

CategoryInfo resolve_category(TraceBuilder& builder, std::string_view name) {
  CategoryInfo info;
  GpuActivityKind kind;
  if (formats::gpu_kind_of_category(name, &kind)) {
    info.gpu_kind = static_cast<int>(kind);
  } else {
    info.category = builder.category(name);
  }
  return info;
}

struct Sequence {
  std::uint32_t default_clock = 0;
  std::uint64_t default_track = 0;
  std::unordered_map<std::uint64_t, const char*> names;  // texts kept by the TraceBuilder
  std::unordered_map<std::uint64_t, CategoryInfo> categories;
  std::unordered_map<std::uint64_t, std::string> annotation_names;
  ClockPairs clocks;
};

struct OpenSlice {
  const char* name;
  CategoryInfo category;
  std::int64_t begin;
  std::vector<Annotation> annotations;
};

class PerfettoReader {
 public:
  PerfettoReader(ByteSource& in, Sink& sink, const ProgressFn& progress)
      : in_(in), builder_(sink), progress_(progress) {}

  Status run() {
    const Status read = read_packets();  // before finish() takes the statistics it found
    return builder_.finish(read, info_, stats_);
  }

 private:
  Status error_at(std::uint64_t at, const std::string& what) const {
    return in_.error_at(at, what);
  }

  // A varint from the stream; false at a clean end of the file (before its first byte).
  Status stream_varint(std::uint64_t* out, bool* end) {
    *end = false;
    std::uint64_t v = 0;
    const std::uint64_t at = in_.offset();
    for (int shift = 0; shift < 64; shift += 7) {
      const int b = in_.get();
      if (b < 0) {
        if (shift == 0) {
          *end = true;
          return in_.status();
        }
        return in_.status().ok() ? error_at(at, "a complete varint, found the end of the file")
                                 : in_.status();
      }
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        *out = v;
        return {};
      }
    }
    return error_at(at, "a varint of at most 10 bytes");
  }

  Status read_packets() {
    std::string data;
    for (;;) {
      const std::uint64_t at = in_.offset();
      std::uint64_t tag, length = 0;
      bool end;
      if (Status s = stream_varint(&tag, &end); !s.ok() || end) return s;
      const int wire = static_cast<int>(tag & 7);
      if (wire == 0) {
        if (Status s = stream_varint(&length, &end); !s.ok() || end)
          return s.ok() ? error_at(in_.offset(), "a varint value") : s;
        continue;
      }
      if (wire == 1 || wire == 5) {
        const std::size_t n = wire == 1 ? 8 : 4;
        if (in_.skip(n) != n) return error_at(in_.offset(), "a fixed-size value");
        continue;
      }
      if (wire != 2) {
        return error_at(at,
                        "a Trace field (a packet: field 1, length-delimited), found wire type " +
                            std::to_string(wire));
      }
      if (Status s = stream_varint(&length, &end); !s.ok() || end)
        return s.ok() ? error_at(in_.offset(), "a packet length") : s;
      if (length > kMaxPacket) {
        return error_at(at,
                        "a packet of at most 64 MiB, found a length of " + std::to_string(length));
      }
      data.resize(length);
      const std::size_t got = in_.read(data.data(), length);
      if (got != length) {
        if (!in_.status().ok()) return in_.status();
        return error_at(in_.offset(), std::to_string(length) + " bytes of packet, found " +
                                          std::to_string(got) + " (the file is truncated)");
      }
      if ((tag >> 3) != 1) continue;  // not a packet
      if (Status s = read_packet(data, at); !s.ok()) return s;
      if (progress_ && (++packets_ & 0xFFFF) == 0) progress_(in_.progress(), builder_.events());
    }
  }

  std::int64_t to_realtime(const Sequence& seq, std::uint32_t clock, std::int64_t ts) const {
    if (clock == kClockRealtime) return ts;
    for (const auto* clocks : {&seq.clocks, &global_clocks_}) {
      const auto it = clocks->find(clock);
      // In unsigned arithmetic: corrupt values wrap (and are rejected after) instead of
      // overflowing.
      if (it != clocks->end()) {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(ts) -
                                         static_cast<std::uint64_t>(it->second.first) +
                                         static_cast<std::uint64_t>(it->second.second));
      }
    }
    return ts;  // no snapshot relates this clock to wall time: taken as it is
  }

  void read_interned(Sequence& seq, std::string_view bytes) {
    ProtoView in(bytes);
    while (in.next()) {
      if (in.field() < interned::kEventCategories || in.field() > interned::kDebugAnnotationNames)
        continue;
      ProtoView entry(in.bytes());
      std::uint64_t iid = 0;
      std::string_view name;
      while (entry.next()) {
        if (entry.field() == interned::kIid) iid = entry.u64();
        if (entry.field() == interned::kEntryName) name = entry.bytes();
      }
      // Interned entries per sequence are bounded like names: past the cap new ones are ignored
      // (their events fall back to the unnamed case), counted.
      if (seq.categories.size() + seq.names.size() + seq.annotation_names.size() >=
              3 * TraceBuilder::kMaxNames &&
          seq.names.find(iid) == seq.names.end()) {
        builder_.note_capped();
        continue;
      }
      switch (in.field()) {
        case interned::kEventCategories:
          seq.categories[iid] = resolve_category(builder_, name);
          break;
        case interned::kEventNames:
          seq.names[iid] = builder_.text(name);
          break;
        default:
          seq.annotation_names[iid] = std::string(name);
          break;
      }
    }
  }

  void read_descriptor(std::string_view bytes) {
    std::uint64_t uuid;
    Track t = decode_track_descriptor(bytes, &uuid);
    if (t.process && info_.pid == 0) {
      info_.pid = t.pid;
      info_.process_name = t.name;
    }
    if (t.thread) builder_.name_thread(t.pid, t.tid, t.name);
    if (tracks_.size() >= TraceBuilder::kMaxThreads && tracks_.find(uuid) == tracks_.end()) {
      builder_.note_capped();  // its events go to a thread named after nothing, like unknown tracks
      return;
    }
    tracks_[uuid] = std::move(t);
  }

  Status read_packet(std::string_view bytes, std::uint64_t at) {
    ProtoView p(bytes);
    std::int64_t ts = 0;
    bool has_ts = false;
    std::uint32_t clock = 0, seq_id = 0, flags = 0;
    std::string_view track_event, interned, snapshot, descriptor, defaults;
    while (p.next()) {
      switch (p.field()) {
        case packet::kTimestamp:
          ts = p.i64();
          has_ts = true;
          break;
        case packet::kTimestampClockId:
          clock = static_cast<std::uint32_t>(p.u64());
          break;
        case packet::kSequenceId:
          seq_id = static_cast<std::uint32_t>(p.u64());
          break;
        case packet::kSequenceFlags:
          flags = static_cast<std::uint32_t>(p.u64());
          break;
        case packet::kTrackEvent:
          track_event = p.bytes();
          break;
        case packet::kInternedData:
          interned = p.bytes();
          break;
        case packet::kClockSnapshot:
          snapshot = p.bytes();
          break;
        case packet::kTrackDescriptor:
          descriptor = p.bytes();
          break;
        case packet::kDefaults:
          defaults = p.bytes();
          break;
        default:
          break;
      }
    }
    if (!p.ok()) return error_at(at, "a well-formed TracePacket");
    Sequence& seq = sequences_[seq_id];
    if ((flags & kSeqIncrementalStateCleared) != 0) seq = Sequence();
    if (!snapshot.empty())
      decode_clock_snapshot(snapshot, seq_id == 0 ? &global_clocks_ : &seq.clocks);
    if (!defaults.empty()) decode_defaults(defaults, &seq.default_clock, &seq.default_track);
    if (!interned.empty()) read_interned(seq, interned);
    if (!descriptor.empty()) read_descriptor(descriptor);
    if (track_event.empty()) return {};
    if (!has_ts) return error_at(at, "a timestamp on a packet with a track event");
    if (clock == 0) clock = seq.default_clock != 0 ? seq.default_clock : kClockBoottime;
    const std::int64_t wall = to_realtime(seq, clock, ts);
    // Wall-clock times within ±2^62 ns (146 years) of 1970: any other is corruption, and
    // keeping to it leaves every later difference of two times free of overflow.
    constexpr std::int64_t kLimit = std::int64_t{1} << 62;
    if (wall < -kLimit || wall > kLimit)
      return error_at(at, "a timestamp within 146 years of 1970");
    if (!builder_.is_open()) {
      // gpuprobe's traces start each sequence's clock at the session's start.
      const auto origin = seq.clocks.find(clock);
      info_.start_wall_ns =
          origin != seq.clocks.end() && clock >= 64 ? origin->second.second : wall;
      if (Status s = builder_.open(info_); !s.ok()) return s;
    }
    return read_track_event(seq, track_event, wall, at);
  }

  Status read_track_event(Sequence& seq, std::string_view bytes, std::int64_t wall,
                          std::uint64_t at) {
    ProtoView e(bytes);
    int type = 0;
    std::uint64_t track = seq.default_track;
    const char* name = "";
    CategoryInfo category;
    bool has_category = false;
    double counter = 0;
    std::vector<Annotation> annotations;
    while (e.next()) {
      switch (e.field()) {
        case event::kType:
          type = static_cast<int>(e.u64());
          break;
        case event::kTrackUuid:
          track = e.u64();
          break;
        case event::kName:
          // The summary is known by its name, which no cap on names may replace.
          name = e.bytes() == kStatsName ? kStatsName.data() : builder_.text(e.bytes());
          break;
        case event::kNameIid: {
          const auto it = seq.names.find(e.u64());
          if (it == seq.names.end())
            return error_at(at, "an interned event name for iid " + std::to_string(e.u64()));
          name = it->second;
          break;
        }
        case event::kCategoryIids: {
          const auto it = seq.categories.find(e.u64());
          if (it != seq.categories.end() && !has_category) {
            category = it->second;
            has_category = true;
          }
          break;
        }
        case event::kCategories:
          if (!has_category) {
            category = resolve_category(builder_, e.bytes());
            has_category = true;
          }
          break;
        case event::kCounterValue:
          counter = static_cast<double>(e.i64());
          break;
        case event::kDoubleCounterValue:
          counter = e.f64();
          break;
        case event::kDebugAnnotations:
          annotations.push_back(decode_annotation(e.bytes(), seq.annotation_names));
          break;
        default:
          break;
      }
    }
    if (!e.ok()) return error_at(at, "a well-formed TrackEvent");
    switch (type) {
      case event::kSliceBegin: {
        if (open_.size() >= TraceBuilder::kMaxThreads && open_.find(track) == open_.end()) {
          builder_.note_capped();  // slices open on too many tracks at once
          return {};
        }
        auto& stack = open_[track];
        if (stack.size() >= kMaxDepth) return error_at(at, "at most 1024 nested slices per track");
        stack.push_back({name, category, wall, std::move(annotations)});
        return {};
      }
      case event::kSliceEnd: {
        const auto it = open_.find(track);
        if (it == open_.end() || it->second.empty()) return {};  // BEGIN before the trace started
        auto& stack = it->second;
        OpenSlice slice = std::move(stack.back());
        stack.pop_back();
        return emit_slice(track, slice, wall);
      }
      case event::kInstant:
        if (std::strcmp(name, kStatsName.data()) == 0) {
          apply_stats(annotations, &info_, &stats_);
          return {};
        }
        if (std::strcmp(name, formats::kDeviceEventName) == 0) {
          if (info_.devices.size() >= kMaxDevices) {
            builder_.note_capped();
          } else {
            info_.devices.push_back(decode_device(annotations));
          }
          return {};
        }
        return builder_.instant(thread_of(track), builder_.site(name, category.category), wall);
      case event::kCounter: {
        const Track& t = tracks_[track];
        // The counter's category, as the writer gave it on the value (app when none).
        return builder_.counter(counter_thread(), builder_.site(t.name, category.category), wall,
                                counter);
      }
      default:
        return {};
    }
  }

  // Slices on a thread's track belong to that thread; those on other tracks (a process's, a
  // producer's own) to a thread named after the track.
  std::uint32_t thread_of(std::uint64_t uuid) {
    const auto it = tracks_.find(uuid);
    if (it != tracks_.end() && it->second.thread)
      return builder_.thread(it->second.pid, it->second.tid);
    const std::int64_t tid = static_cast<std::int64_t>(uuid & 0x7FFFFFFFFFFFull);
    const std::uint32_t thread = builder_.thread(info_.pid, tid);
    if (it != tracks_.end() && !it->second.name.empty())
      builder_.name_thread(info_.pid, tid, it->second.name);
    return thread;
  }

  std::uint32_t counter_thread() {
    builder_.name_thread(info_.pid, 0, "counters");
    return builder_.thread(info_.pid, 0);
  }

  Status emit_slice(std::uint64_t track, OpenSlice& s, std::int64_t end) {
    if (s.category.gpu_kind < 0) {
      const std::uint32_t thread = thread_of(track);
      long long step;
      // As in Chrome traces: Kineto's GPU-side copy of a step (gpu_user_annotation, read as
      // cuda) is not a second step.
      if (s.category.category != Category::kCuda && formats::step_number(s.name, &step))
        return builder_.step(thread, step, s.begin, end);
      return builder_.range(thread, builder_.site(s.name, s.category.category), s.begin, end);
    }
    const std::vector<Annotation>& as = s.annotations;
    const auto kind = static_cast<GpuActivityKind>(s.category.gpu_kind);
    GpuActivity& a = builder_.gpu();
    a.kind = kind;
    a.name = s.name;
    if (kind == GpuActivityKind::kMemcpy) a.copy_kind = memcpy_kind_from_name(a.name);
    if (kind == GpuActivityKind::kSync) a.sync_kind = formats::sync_kind_from_name(a.name);
    if (kind == GpuActivityKind::kRuntimeApi || kind == GpuActivityKind::kDriverApi) {
      const auto it = tracks_.find(track);
      std::int64_t tid = 0;
      if (it != tracks_.end() && it->second.thread) {
        tid = it->second.tid;
        builder_.thread(it->second.pid, tid);  // shown among the thread's ranges
      } else if (it != tracks_.end()) {
        // "CUDA API thread (CUPTI id N)" or "thread N": the id is the last number.
        const std::string& n = it->second.name;
        const std::size_t digits = n.find_last_of("0123456789");
        std::size_t from = digits;
        while (from != std::string::npos && from > 0 && n[from - 1] >= '0' && n[from - 1] <= '9')
          --from;
        if (digits != std::string::npos) tid = std::strtoll(n.c_str() + from, nullptr, 10);
      }
      a.thread_id = static_cast<std::uint32_t>(tid);
      a.os_tid = tid;
    }
    // The arguments, through the table the writers write from (formats/gpu_args.h).
    for (const Annotation& ann : as) {
      if (ann.is_string) continue;
      int component = 0;
      const formats::GpuArg* arg = formats::find_gpu_arg(ann.name, &component);
      if (arg != nullptr && arg->set != nullptr) arg->set(a, component, ann.number);
    }
    for (const Annotation& ann : as) {
      if (ann.name == "range" && ann.is_string) a.range = builder_.site(ann.text, Category::kApp);
    }
    return builder_.commit_gpu(s.begin, end);
  }

  ByteSource& in_;
  TraceBuilder builder_;
  const ProgressFn& progress_;
  TraceInfo info_;
  Stats stats_;
  std::unordered_map<std::uint32_t, Sequence> sequences_;
  ClockPairs global_clocks_;
  std::unordered_map<std::uint64_t, Track> tracks_;
  std::unordered_map<std::uint64_t, std::vector<OpenSlice>> open_;
  std::uint64_t packets_ = 0;
};

}  // namespace

Status read_perfetto_trace(ByteSource& in, Sink& sink, const ProgressFn& progress) {
  return PerfettoReader(in, sink, progress).run();
}

}  // namespace gpuprobe::readers
