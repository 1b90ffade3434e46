#include "flight/event_store.h"

namespace gpuprobe::flight {

using formats::flight_events::kMaxEventBytes;

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
  if (open_.events == 0) {
    open_.first_tick = e.begin;
    prev_tick_ = e.begin;
  }
  formats::flight_events::encode_event(e, prev_tick_, *this, &open_.bytes);
  prev_tick_ = e.begin;
  ++open_.events;
  if (e.begin < open_.min_tick) open_.min_tick = e.begin;
  const std::uint64_t last = e.end > e.begin ? e.end : e.begin;
  if (last > open_.max_tick) open_.max_tick = last;
  if (last > latest_) latest_ = last;
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

}  // namespace gpuprobe::flight
