// The flight recorder's event encoding — one schema for the store that writes it
// (flight/event_store.h) and the readers of it: dumps (flight/dump_writer.h) and the window file
// (formats/flight_window.h). Varints, times as deltas from the event before, names as indices
// into tables kept beside the chunks: under 10 bytes a range, 24 a kernel.
//
// An event: a tag byte (EventType in the low bits, kHasValue), the begin tick as a signed delta
// from the previous event's begin (the chunk's first_tick for its first), the duration in ticks;
// then the thread and the site index, or for GPU work its kind, a presence mask of its optional
// fields (GpuField) and those fields; then the value (8 bytes) when kHasValue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::formats::flight_events {

// The events of one span of the recording, appended in order.
struct Chunk {
  std::vector<std::uint8_t> bytes;
  std::uint64_t first_tick = 0;  // the base of the first event's delta
  std::uint64_t min_tick = ~std::uint64_t{0};
  std::uint64_t max_tick = 0;  // the latest end in it
  std::uint32_t events = 0;
};

// Chunks and the tables their indices point into.
struct ChunkSet {
  std::vector<std::shared_ptr<const Chunk>> chunks;
  std::vector<const CallSite*> sites;
  std::vector<const char*> names;
};

constexpr std::uint8_t kHasValue = 0x10;
// Room for the largest event (a kernel with every field): a chunk is sealed before one would not
// fit.
constexpr std::size_t kMaxEventBytes = 256;

// The optional fields of a GpuActivity, one bit each: a field at its default costs nothing.
enum GpuField : std::uint32_t {
  kName = 1u << 0,
  kCorrelation = 1u << 1,
  kDevice = 1u << 2,
  kContext = 1u << 3,
  kStream = 1u << 4,
  kGrid = 1u << 5,
  kBlock = 1u << 6,
  kRegisters = 1u << 7,
  kStaticShared = 1u << 8,
  kDynamicShared = 1u << 9,
  kGraph = 1u << 10,
  kGraphNode = 1u << 11,
  kDeclaredBytes = 1u << 12,
  kDeclaredFlops = 1u << 13,
  kBytes = 1u << 14,
  kCopyKinds = 1u << 15,
  kCbid = 1u << 16,
  kThreadId = 1u << 17,
  kOsTid = 1u << 18,
  kProcessId = 1u << 19,
  kRange = 1u << 20,
  kSync = 1u << 21,
};

inline void put_varint(std::vector<std::uint8_t>* out, std::uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<std::uint8_t>(v));
}

inline void put_signed(std::vector<std::uint8_t>* out, std::int64_t v) {
  put_varint(out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

inline void put_double(std::vector<std::uint8_t>* out, double v) {
  std::uint8_t raw[8];
  std::memcpy(raw, &v, 8);
  out->insert(out->end(), raw, raw + 8);
}

// Reads what the put_ functions wrote, never past `end`: past it every read gives 0 and ok()
// turns false.
struct ByteCursor {
  const std::uint8_t* p;
  const std::uint8_t* end;
  bool overrun = false;

  bool ok() const noexcept { return !overrun; }
  std::uint64_t varint() noexcept {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        overrun = true;
        return 0;
      }
      const std::uint8_t b = *p++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    return v;
  }
  std::int64_t signed_varint() noexcept {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  double real() noexcept {
    double v = 0;
    if (end - p < 8) {
      overrun = true;
      p = end;
      return 0;
    }
    std::memcpy(&v, p, 8);
    p += 8;
    return v;
  }
  std::uint8_t byte() noexcept {
    if (p >= end) {
      overrun = true;
      return 0;
    }
    return *p++;
  }
};

namespace detail {
// Never use this directly: encode_event()'s GPU part.
template <class Tables>
void encode_gpu(const GpuActivity& a, Tables& tables, std::vector<std::uint8_t>* out) {
  std::uint32_t mask = 0;
  if (a.name != nullptr && a.name[0] != '\0') mask |= kName;
  if (a.correlation) mask |= kCorrelation;
  if (a.device) mask |= kDevice;
  if (a.context) mask |= kContext;
  if (a.stream) mask |= kStream;
  if (a.grid[0] || a.grid[1] || a.grid[2]) mask |= kGrid;
  if (a.block[0] || a.block[1] || a.block[2]) mask |= kBlock;
  if (a.registers_per_thread) mask |= kRegisters;
  if (a.static_shared_memory) mask |= kStaticShared;
  if (a.dynamic_shared_memory) mask |= kDynamicShared;
  if (a.graph_id) mask |= kGraph;
  if (a.graph_node_id) mask |= kGraphNode;
  if (a.declared_bytes != 0) mask |= kDeclaredBytes;
  if (a.declared_flops != 0) mask |= kDeclaredFlops;
  if (a.bytes) mask |= kBytes;
  if (a.copy_kind != MemcpyKind::kUnknown || a.src_kind != MemoryKind::kUnknown ||
      a.dst_kind != MemoryKind::kUnknown)
    mask |= kCopyKinds;
  if (a.cbid) mask |= kCbid;
  if (a.thread_id) mask |= kThreadId;
  if (a.os_tid) mask |= kOsTid;
  if (a.process_id) mask |= kProcessId;
  if (a.range != nullptr) mask |= kRange;
  if (a.sync_kind != SyncKind::kUnknown || a.cuda_event_id) mask |= kSync;
  out->push_back(static_cast<std::uint8_t>(a.kind));
  put_varint(out, mask);
  if (mask & kName) put_varint(out, tables.name_index(a.name));
  if (mask & kCorrelation) put_varint(out, a.correlation);
  if (mask & kDevice) put_varint(out, a.device);
  if (mask & kContext) put_varint(out, a.context);
  if (mask & kStream) put_varint(out, a.stream);
  if (mask & kGrid)
    for (std::int32_t v : a.grid) put_signed(out, v);
  if (mask & kBlock)
    for (std::int32_t v : a.block) put_signed(out, v);
  if (mask & kRegisters) put_varint(out, a.registers_per_thread);
  if (mask & kStaticShared) put_signed(out, a.static_shared_memory);
  if (mask & kDynamicShared) put_signed(out, a.dynamic_shared_memory);
  if (mask & kGraph) put_varint(out, a.graph_id);
  if (mask & kGraphNode) put_varint(out, a.graph_node_id);
  if (mask & kDeclaredBytes) put_double(out, a.declared_bytes);
  if (mask & kDeclaredFlops) put_double(out, a.declared_flops);
  if (mask & kBytes) put_varint(out, a.bytes);
  if (mask & kCopyKinds) {
    out->push_back(static_cast<std::uint8_t>(a.copy_kind));
    out->push_back(static_cast<std::uint8_t>(a.src_kind));
    out->push_back(static_cast<std::uint8_t>(a.dst_kind));
  }
  if (mask & kCbid) put_varint(out, a.cbid);
  if (mask & kThreadId) put_varint(out, a.thread_id);
  if (mask & kOsTid) put_signed(out, a.os_tid);
  if (mask & kProcessId) put_varint(out, a.process_id);
  if (mask & kRange) put_varint(out, tables.site_index(a.range));
  if (mask & kSync) {
    out->push_back(static_cast<std::uint8_t>(a.sync_kind));
    put_varint(out, a.cuda_event_id);
  }
}
}  // namespace detail

// Appends `e` (not a GPU event without its activity) to `out`, its begin as a delta from
// `prev_tick`. `tables` gives indices: std::uint32_t site_index(const CallSite*) and
// std::uint32_t name_index(const char*).
template <class Tables>
void encode_event(const Event& e, std::uint64_t prev_tick, Tables& tables,
                  std::vector<std::uint8_t>* out) {
  const bool has_value = e.value != 0;
  out->push_back(
      static_cast<std::uint8_t>(static_cast<std::uint8_t>(e.type) | (has_value ? kHasValue : 0)));
  put_signed(out, static_cast<std::int64_t>(e.begin - prev_tick));
  put_signed(out, static_cast<std::int64_t>(e.end - e.begin));
  if (e.type == EventType::kGpu) {
    detail::encode_gpu(*e.gpu, tables, out);
  } else {
    put_varint(out, e.thread);
    put_varint(out, tables.site_index(e.site));
  }
  if (has_value) put_double(out, e.value);
}

// Decodes the events of `set` that overlap [from, to] (ticks), in the order they were appended,
// handing them to `emit` in batches; a batch's events and their GPU activities are valid during
// the call. Safe on damaged bytes: a chunk is read up to the first event that does not decode
// (an unknown type or kind, an index outside the tables, bytes that end early); returns how many
// chunks were cut short so.
std::uint64_t decode(const ChunkSet& set, std::uint64_t from, std::uint64_t to,
                     const std::function<void(const std::vector<Event>&)>& emit);

}  // namespace gpuprobe::formats::flight_events
