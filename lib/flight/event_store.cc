#include "flight/event_store.h"

#include <cstring>

namespace gpuprobe::flight {
namespace {

constexpr std::uint8_t kHasValue = 0x10;
// Room for the largest event (a kernel with every field), so a chunk is sealed before one
// would not fit.
constexpr std::size_t kMaxEventBytes = 256;

void put_varint(std::vector<std::uint8_t>* out, std::uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<std::uint8_t>(v));
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

void put_signed(std::vector<std::uint8_t>* out, std::int64_t v) { put_varint(out, zigzag(v)); }

void put_double(std::vector<std::uint8_t>* out, double v) {
  std::uint8_t raw[8];
  std::memcpy(raw, &v, 8);
  out->insert(out->end(), raw, raw + 8);
}

struct Reader {
  const std::uint8_t* p;
  const std::uint8_t* end;

  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
      const std::uint8_t b = *p++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    return v;
  }
  std::int64_t signed_varint() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  double real() {
    double v = 0;
    if (end - p >= 8) std::memcpy(&v, p, 8);
    p += 8;
    return v;
  }
  std::uint8_t byte() { return p < end ? *p++ : 0; }
};

// The optional fields of a GpuActivity, one bit each in the presence mask that follows its
// kind: a field at its default costs nothing.
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

}  // namespace

EventStore::EventStore(std::uint64_t max_bytes) : max_bytes_(max_bytes) {
  open_.bytes.reserve(kChunkBytes);
}

std::uint32_t EventStore::site_index(const CallSite* site) {
  const auto [it, inserted] = site_ids_.emplace(site, static_cast<std::uint32_t>(sites_.size()));
  if (inserted) sites_.push_back(site);
  return it->second;
}

std::uint32_t EventStore::name_index(const char* name) {
  const auto [it, inserted] = name_ids_.emplace(name, static_cast<std::uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

void EventStore::append(const Event& e) {
  if (e.type == EventType::kGpu && e.gpu == nullptr) return;  // nothing to keep
  if (open_.bytes.size() + kMaxEventBytes > kChunkBytes) seal();
  std::vector<std::uint8_t>* out = &open_.bytes;
  if (open_.events == 0) {
    open_.first_tick = e.begin;
    prev_tick_ = e.begin;
  }
  const bool has_value = e.value != 0;
  out->push_back(
      static_cast<std::uint8_t>(static_cast<std::uint8_t>(e.type) | (has_value ? kHasValue : 0)));
  put_signed(out, static_cast<std::int64_t>(e.begin - prev_tick_));
  put_signed(out, static_cast<std::int64_t>(e.end - e.begin));
  prev_tick_ = e.begin;
  if (e.type == EventType::kGpu) {
    encode_gpu(*e.gpu);
  } else {
    put_varint(out, e.thread);
    put_varint(out, site_index(e.site));
  }
  if (has_value) put_double(out, e.value);
  ++open_.events;
  if (e.begin < open_.min_tick) open_.min_tick = e.begin;
  const std::uint64_t last = e.end > e.begin ? e.end : e.begin;
  if (last > open_.max_tick) open_.max_tick = last;
  if (last > latest_) latest_ = last;
}

void EventStore::encode_gpu(const GpuActivity& a) {
  std::vector<std::uint8_t>* out = &open_.bytes;
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
  if (mask & kName) put_varint(out, name_index(a.name));
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
  if (mask & kRange) put_varint(out, site_index(a.range));
  if (mask & kSync) {
    out->push_back(static_cast<std::uint8_t>(a.sync_kind));
    put_varint(out, a.cuda_event_id);
  }
}

void EventStore::seal() {
  if (open_.events == 0) return;
  auto chunk = std::make_shared<Chunk>(std::move(open_));
  chunk->bytes.shrink_to_fit();
  sealed_bytes_ += chunk->bytes.capacity();
  sealed_events_ += chunk->events;
  sealed_.push_back(std::move(chunk));
  open_ = Chunk{};
  open_.bytes.reserve(kChunkBytes);
}

void EventStore::evict(std::uint64_t horizon) {
  const auto drop_front = [this](std::uint64_t* counter) {
    *counter += sealed_.front()->events;
    sealed_bytes_ -= sealed_.front()->bytes.capacity();
    sealed_events_ -= sealed_.front()->events;
    sealed_.pop_front();
  };
  while (!sealed_.empty() && sealed_.front()->max_tick < horizon) {
    drop_front(&counters_.overwritten_age);
  }
  // The open chunk counts against the cap as a full one: it is reserved.
  while (!sealed_.empty() && sealed_bytes_ + kChunkBytes > max_bytes_) {
    drop_front(&counters_.overwritten_memory);
  }
  if (sealed_.empty() && open_.events > 0 && open_.max_tick < horizon) {
    counters_.overwritten_age += open_.events;
    open_ = Chunk{};
    open_.bytes.reserve(kChunkBytes);
  }
}

void EventStore::clear() {
  sealed_.clear();
  sealed_bytes_ = 0;
  sealed_events_ = 0;
  open_ = Chunk{};
  sites_ = {};
  site_ids_ = {};
  names_ = {};
  name_ids_ = {};
}

StoreSnapshot EventStore::snapshot() const {
  StoreSnapshot s;
  s.chunks.assign(sealed_.begin(), sealed_.end());
  if (open_.events > 0) s.chunks.push_back(std::make_shared<const Chunk>(open_));
  s.sites = sites_;
  s.names = names_;
  return s;
}

StoreCounters EventStore::counters() const noexcept {
  StoreCounters c = counters_;
  c.events = sealed_events_ + open_.events;
  c.bytes =
      sealed_bytes_ + open_.bytes.capacity() + (sites_.size() + names_.size()) * 3 * sizeof(void*);
  return c;
}

void decode(const StoreSnapshot& snapshot, std::uint64_t from, std::uint64_t to,
            const std::function<void(const std::vector<Event>&)>& emit) {
  constexpr std::size_t kBatch = 8192;
  std::vector<Event> batch;
  std::vector<GpuActivity> gpu;  // reserved once: the events point into it
  batch.reserve(kBatch);
  gpu.reserve(kBatch);
  const auto site = [&](std::uint64_t i) -> const CallSite* {
    return i < snapshot.sites.size() ? snapshot.sites[i] : nullptr;
  };
  const auto flush = [&] {
    if (!batch.empty()) emit(batch);
    batch.clear();
    gpu.clear();
  };
  for (const std::shared_ptr<const Chunk>& chunk : snapshot.chunks) {
    if (chunk->max_tick < from || chunk->min_tick > to) continue;
    Reader r{chunk->bytes.data(), chunk->bytes.data() + chunk->bytes.size()};
    std::uint64_t prev = chunk->first_tick;
    for (std::uint32_t n = 0; n < chunk->events && r.p < r.end; ++n) {
      const std::uint8_t tag = r.byte();
      Event e{static_cast<EventType>(tag & 0x0f), 0, nullptr, 0, 0, 0.0};
      e.begin = prev + static_cast<std::uint64_t>(r.signed_varint());
      e.end = e.begin + static_cast<std::uint64_t>(r.signed_varint());
      prev = e.begin;
      GpuActivity a;
      if (e.type == EventType::kGpu) {
        a.kind = static_cast<GpuActivityKind>(r.byte());
        a.start = e.begin;
        a.end = e.end;
        const std::uint64_t mask = r.varint();
        if (mask & kName) {
          const std::uint64_t i = r.varint();
          a.name = i < snapshot.names.size() ? snapshot.names[i] : "";
        }
        if (mask & kCorrelation) a.correlation = static_cast<std::uint32_t>(r.varint());
        if (mask & kDevice) a.device = static_cast<std::uint32_t>(r.varint());
        if (mask & kContext) a.context = static_cast<std::uint32_t>(r.varint());
        if (mask & kStream) a.stream = static_cast<std::uint32_t>(r.varint());
        if (mask & kGrid)
          for (std::int32_t& v : a.grid) v = static_cast<std::int32_t>(r.signed_varint());
        if (mask & kBlock)
          for (std::int32_t& v : a.block) v = static_cast<std::int32_t>(r.signed_varint());
        if (mask & kRegisters) a.registers_per_thread = static_cast<std::uint32_t>(r.varint());
        if (mask & kStaticShared)
          a.static_shared_memory = static_cast<std::int32_t>(r.signed_varint());
        if (mask & kDynamicShared)
          a.dynamic_shared_memory = static_cast<std::int32_t>(r.signed_varint());
        if (mask & kGraph) a.graph_id = static_cast<std::uint32_t>(r.varint());
        if (mask & kGraphNode) a.graph_node_id = r.varint();
        if (mask & kDeclaredBytes) a.declared_bytes = r.real();
        if (mask & kDeclaredFlops) a.declared_flops = r.real();
        if (mask & kBytes) a.bytes = r.varint();
        if (mask & kCopyKinds) {
          a.copy_kind = static_cast<MemcpyKind>(r.byte());
          a.src_kind = static_cast<MemoryKind>(r.byte());
          a.dst_kind = static_cast<MemoryKind>(r.byte());
        }
        if (mask & kCbid) a.cbid = static_cast<std::uint32_t>(r.varint());
        if (mask & kThreadId) a.thread_id = static_cast<std::uint32_t>(r.varint());
        if (mask & kOsTid) a.os_tid = r.signed_varint();
        if (mask & kProcessId) a.process_id = static_cast<std::uint32_t>(r.varint());
        if (mask & kRange) a.range = site(r.varint());
        if (mask & kSync) {
          a.sync_kind = static_cast<SyncKind>(r.byte());
          a.cuda_event_id = static_cast<std::uint32_t>(r.varint());
        }
      } else {
        e.thread = static_cast<std::uint32_t>(r.varint());
        e.site = site(r.varint());
      }
      if (tag & kHasValue) e.value = r.real();
      const std::uint64_t last = e.end > e.begin ? e.end : e.begin;
      if (last < from || e.begin > to) continue;
      if (e.type == EventType::kGpu) {
        gpu.push_back(a);
        e = Event::from_gpu(gpu.back());
      } else if (e.site == nullptr) {
        continue;  // a damaged chunk: nothing to name the event by
      }
      batch.push_back(e);
      if (batch.size() == kBatch) flush();
    }
  }
  flush();
}

}  // namespace gpuprobe::flight
