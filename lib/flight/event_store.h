// The flight recorder's memory: the events of the last seconds, encoded compactly
// (formats/flight_events.h: under 10 bytes a range, 24 a kernel) into chunks of 64 KiB. A
// full chunk is sealed and never changes again, so a dump shares it with the store instead of
// copying it, and the collector goes on appending while the dump is written. The oldest chunks
// are dropped as they age out of the window or as the store reaches its memory cap, and the
// events in them are counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "formats/flight_events.h"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::flight {

using Chunk = formats::flight_events::Chunk;
// What a dump reads: sealed chunks shared with the store, a copy of the open one, and the name
// tables as they were. Reading it needs no lock.
using StoreSnapshot = formats::flight_events::ChunkSet;
using formats::flight_events::decode;

struct StoreCounters {
  std::uint64_t events = 0;              // kept now
  std::uint64_t bytes = 0;               // held now, chunks and tables
  std::uint64_t overwritten_age = 0;     // events dropped as they left the window
  std::uint64_t overwritten_memory = 0;  // events dropped, younger than the window, for the cap
};

class EventStore {
 public:
  static constexpr std::size_t kChunkBytes = 64 * 1024;

  explicit EventStore(std::uint64_t max_bytes);

  // Appends one event (a GPU event's activity is copied).
  void append(const Event& event);
  // Drops the chunks whose latest event ended before `horizon`, then the oldest until the store
  // is within its memory cap.
  void evict(std::uint64_t horizon);
  // The latest end tick appended so far.
  std::uint64_t latest_tick() const noexcept { return latest_; }
  StoreSnapshot snapshot() const;
  // Lets go of every event and table (the counters stay): the session has stopped.
  void clear();
  StoreCounters counters() const noexcept;

  // The tables' indices, for the encoder (formats/flight_events.h).
  std::uint32_t site_index(const CallSite* site);
  std::uint32_t name_index(const char* name);

 private:
  void seal();

  const std::uint64_t max_bytes_;
  std::deque<std::shared_ptr<const Chunk>> sealed_;
  Chunk open_;
  std::uint64_t prev_tick_ = 0;
  std::uint64_t latest_ = 0;
  std::uint64_t sealed_bytes_ = 0;
  std::uint64_t sealed_events_ = 0;
  StoreCounters counters_;
  std::vector<const CallSite*> sites_;
  std::unordered_map<const CallSite*, std::uint32_t> site_ids_;
  std::vector<const char*> names_;
  std::unordered_map<const char*, std::uint32_t> name_ids_;
};

}  // namespace gpuprobe::flight
