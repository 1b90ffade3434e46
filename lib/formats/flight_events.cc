#include "formats/flight_events.h"

namespace gpuprobe::formats::flight_events {
namespace {

constexpr std::uint8_t kMaxEventType = static_cast<std::uint8_t>(EventType::kGpu);
constexpr std::uint8_t kMaxGpuKind = static_cast<std::uint8_t>(GpuActivityKind::kOverhead);

// The GPU part of an event; false when it cannot be what the encoder wrote.
bool decode_gpu(ByteCursor& r, const ChunkSet& set, GpuActivity* a) {
  const std::uint8_t kind = r.byte();
  if (kind > kMaxGpuKind) return false;
  a->kind = static_cast<GpuActivityKind>(kind);
  const std::uint64_t mask = r.varint();
  if (mask & kName) {
    const std::uint64_t i = r.varint();
    if (i >= set.names.size()) return false;
    a->name = set.names[i];
  }
  if (mask & kCorrelation) a->correlation = static_cast<std::uint32_t>(r.varint());
  if (mask & kDevice) a->device = static_cast<std::uint32_t>(r.varint());
  if (mask & kContext) a->context = static_cast<std::uint32_t>(r.varint());
  if (mask & kStream) a->stream = static_cast<std::uint32_t>(r.varint());
  if (mask & kGrid)
    for (std::int32_t& v : a->grid) v = static_cast<std::int32_t>(r.signed_varint());
  if (mask & kBlock)
    for (std::int32_t& v : a->block) v = static_cast<std::int32_t>(r.signed_varint());
  if (mask & kRegisters) a->registers_per_thread = static_cast<std::uint32_t>(r.varint());
  if (mask & kStaticShared) a->static_shared_memory = static_cast<std::int32_t>(r.signed_varint());
  if (mask & kDynamicShared)
    a->dynamic_shared_memory = static_cast<std::int32_t>(r.signed_varint());
  if (mask & kGraph) a->graph_id = static_cast<std::uint32_t>(r.varint());
  if (mask & kGraphNode) a->graph_node_id = r.varint();
  if (mask & kDeclaredBytes) a->declared_bytes = r.real();
  if (mask & kDeclaredFlops) a->declared_flops = r.real();
  if (mask & kBytes) a->bytes = r.varint();
  if (mask & kCopyKinds) {
    const std::uint8_t copy = r.byte(), src = r.byte(), dst = r.byte();
    if (copy > static_cast<std::uint8_t>(MemcpyKind::kPtoP) ||
        src > static_cast<std::uint8_t>(MemoryKind::kManagedStatic) ||
        dst > static_cast<std::uint8_t>(MemoryKind::kManagedStatic))
      return false;
    a->copy_kind = static_cast<MemcpyKind>(copy);
    a->src_kind = static_cast<MemoryKind>(src);
    a->dst_kind = static_cast<MemoryKind>(dst);
  }
  if (mask & kCbid) a->cbid = static_cast<std::uint32_t>(r.varint());
  if (mask & kThreadId) a->thread_id = static_cast<std::uint32_t>(r.varint());
  if (mask & kOsTid) a->os_tid = r.signed_varint();
  if (mask & kProcessId) a->process_id = static_cast<std::uint32_t>(r.varint());
  if (mask & kRange) {
    const std::uint64_t i = r.varint();
    if (i >= set.sites.size()) return false;
    a->range = set.sites[i];
  }
  if (mask & kSync) {
    const std::uint8_t sync = r.byte();
    if (sync > static_cast<std::uint8_t>(SyncKind::kContextSynchronize)) return false;
    a->sync_kind = static_cast<SyncKind>(sync);
    a->cuda_event_id = static_cast<std::uint32_t>(r.varint());
  }
  return r.ok();
}

}  // namespace

std::uint64_t decode(const ChunkSet& set, std::uint64_t from, std::uint64_t to,
                     const std::function<void(const std::vector<Event>&)>& emit) {
  constexpr std::size_t kBatch = 8192;
  std::vector<Event> batch;
  std::vector<GpuActivity> gpu;  // reserved once: the events point into it
  batch.reserve(kBatch);
  gpu.reserve(kBatch);
  const auto flush = [&] {
    if (!batch.empty()) emit(batch);
    batch.clear();
    gpu.clear();
  };
  std::uint64_t damaged = 0;
  for (const std::shared_ptr<const Chunk>& chunk : set.chunks) {
    if (chunk->max_tick < from || chunk->min_tick > to) continue;
    ByteCursor r{chunk->bytes.data(), chunk->bytes.data() + chunk->bytes.size()};
    std::uint64_t prev = chunk->first_tick;
    for (std::uint32_t n = 0; n < chunk->events; ++n) {
      const std::uint8_t tag = r.byte();
      const std::uint8_t type = tag & 0x0f;
      Event e{static_cast<EventType>(type), 0, nullptr, 0, 0, 0.0};
      e.begin = prev + static_cast<std::uint64_t>(r.signed_varint());
      e.end = e.begin + static_cast<std::uint64_t>(r.signed_varint());
      prev = e.begin;
      GpuActivity a;
      bool ok = type <= kMaxEventType && r.ok();
      if (ok && e.type == EventType::kGpu) {
        a.start = e.begin;
        a.end = e.end;
        ok = decode_gpu(r, set, &a);
      } else if (ok) {
        e.thread = static_cast<std::uint32_t>(r.varint());
        const std::uint64_t site = r.varint();
        ok = site < set.sites.size();
        if (ok) e.site = set.sites[site];
      }
      if (ok && (tag & kHasValue)) e.value = r.real();
      if (!ok || !r.ok()) {
        ++damaged;
        break;
      }
      const std::uint64_t last = e.end > e.begin ? e.end : e.begin;
      if (last < from || e.begin > to) continue;
      if (e.type == EventType::kGpu) {
        gpu.push_back(a);
        e = Event::from_gpu(gpu.back());
      } else if (e.site == nullptr) {
        continue;  // nothing to name it by
      }
      batch.push_back(e);
      if (batch.size() == kBatch) flush();
    }
  }
  flush();
  return damaged;
}

}  // namespace gpuprobe::formats::flight_events
