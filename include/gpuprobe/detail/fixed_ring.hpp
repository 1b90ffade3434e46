/// @file detail/fixed_ring.hpp
/// @brief The per-thread single-producer/single-consumer ring of fixed-size records.
///
/// Never include this header directly: include <gpuprobe/gpuprobe.hpp>. Its contents may change
/// in any release.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::detail {

/// What a Record holds.
enum class RecordKind : std::uint32_t {
  kRange = 0,      ///< `begin`..`end` in ticks; `arg` is its track (0: the thread itself).
  kInstant = 1,    ///< `begin` in ticks; `end` unused.
  kCounter = 2,    ///< `begin` in ticks; `end` holds the bits of a double.
  kStep = 3,       ///< A step `begin`..`end`; `arg` is its number.
  kTrackName = 4,  ///< Not an event: `site` names track `arg` from now on.
  /// A CUDA API call seen by the GPU backend's callbacks, `begin`..`end` in ticks: `site` names
  /// the function, `arg` is the correlation id that links it to the GPU work it launched.
  kGpuCall = 5,
};

/// One event as the hot path writes it: two words of payload and a pointer to its call site.
/// 32 bytes, so two records share a cache line and a ring of 32768 records is 1 MiB.
struct Record {
  std::uint64_t begin;
  std::uint64_t end;
  const CallSite* site;
  RecordKind kind;
  std::uint32_t arg;  ///< Kind-specific: the step number, or the track.
};
static_assert(sizeof(Record) == 32, "Record must stay 32 bytes");

/// A bounded single-producer/single-consumer queue of Records.
///
/// The producer is the thread that owns the ring; the consumer is the collector. Indices grow
/// without bound and are masked on use, so `head - tail` is the fill level even after wrapping.
/// When the ring is full the newest record is dropped and counted: the producer never waits and
/// never overwrites what the consumer has not read.
class FixedRing {
 public:
  FixedRing() = default;
  FixedRing(const FixedRing&) = delete;
  FixedRing& operator=(const FixedRing&) = delete;

  /// Points the ring at `slots`, `capacity` records (a power of two), and empties it. Only call
  /// while no producer or consumer uses the ring.
  void reset(Record* slots, std::uint64_t capacity) noexcept {
    slots_ = slots;
    mask_ = capacity - 1;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    cached_tail_ = 0;
    writing_ = false;
    dropped_.store(0, std::memory_order_relaxed);
  }

  /// Producer: the slot to fill next, or nullptr (and one more drop) when the ring is full — or
  /// when this thread is already between a try_reserve() and its commit(): a signal handler
  /// that records while it interrupts a record being written would otherwise take the same slot.
  Record* try_reserve() noexcept {
    if (__builtin_expect(writing_, false)) {
      count_drop();
      return nullptr;
    }
    // Claimed before the head is read, so that a handler interrupting from here on sees it. The
    // signal fences only keep the compiler from reordering; they emit no instruction.
    writing_ = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ > mask_) {
      // Acquire pairs with the consumer's release in drain(): once we see its tail, its reads of
      // those slots are finished and we may overwrite them.
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head - cached_tail_ > mask_) {
        count_drop();
        std::atomic_signal_fence(std::memory_order_seq_cst);
        writing_ = false;
        return nullptr;
      }
    }
    return &slots_[head & mask_];
  }

  /// Producer: publishes the slot returned by the last try_reserve().
  void commit() noexcept {
    // Release pairs with the consumer's acquire of head_: the record's fields are visible before
    // the index that exposes them.
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    writing_ = false;
  }

  /// Consumer: calls `visit(const Record&)` for every published record in order and frees their
  /// slots. Returns how many were visited.
  template <class Visit>
  std::uint64_t drain(Visit&& visit) {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    for (std::uint64_t i = tail; i != head; ++i) visit(slots_[i & mask_]);
    tail_.store(head, std::memory_order_release);
    return head - tail;
  }

  /// Consumer: frees every published record without reading it. Returns how many.
  std::uint64_t discard() noexcept {
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    const std::uint64_t tail = tail_.exchange(head, std::memory_order_release);
    return head - tail;
  }

  /// Records dropped because the ring was full (or re-entered by a signal handler), since
  /// reset(). Any thread.
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  /// The number of slots.
  std::uint64_t capacity() const noexcept { return mask_ + 1; }

  /// Bytes from the ring's start to the end of the fields its producer writes.
  static constexpr std::size_t producer_bytes() noexcept;

 private:
  void count_drop() noexcept {
    // Only this thread writes the counter, but a signal handler on it may drop too, between a
    // load and a store: one read-modify-write (on the drop path only) keeps every drop counted.
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }

  // Producer-side fields: 48 bytes, which ThreadRing puts on one cache line with the owner's
  // epoch and depth, so that a record touches one line of them.
  std::atomic<std::uint64_t> head_{0};
  std::uint64_t cached_tail_ = 0;
  bool writing_ = false;  // between try_reserve() and commit(), for re-entry from a signal
  std::atomic<std::uint64_t> dropped_{0};
  Record* slots_ = nullptr;
  std::uint64_t mask_ = 0;
  // The consumer's index a whole line away from the producer's fields, so that the collector's
  // stores do not invalidate the producer's line on every drain. A gap rather than alignas(64):
  // that would align the whole ring and push its producer fields off the line ThreadRing starts.
  char consumer_gap_[64] = {};
  std::atomic<std::uint64_t> tail_{0};
};

constexpr std::size_t FixedRing::producer_bytes() noexcept {
  return offsetof(FixedRing, consumer_gap_);
}

/// What the hot path needs of a thread's ring: the ring and the session epoch it was handed out
/// for. The library extends it with bookkeeping the hot path never touches. The epoch, the depth
/// and the ring's producer fields share the first cache line (checked below): a range's entry
/// and its record touch that one line of the ring's state.
struct alignas(64) ThreadRing {
  /// Atomic (relaxed: one plain load on the hot path) because the registry clears it on another
  /// thread when epochs wrap.
  std::atomic<std::uint32_t> epoch{0};
  /// Ranges open on the owning thread. Written only by the owner, after a closing range's record
  /// is published (release); the collector reads it (acquire) to know that a thread with none
  /// open has nothing more to say about times before the read.
  std::atomic<std::uint32_t> depth{0};
  FixedRing ring;
};
static_assert(offsetof(ThreadRing, ring) + FixedRing::producer_bytes() <= 64,
              "the producer's fields of a ThreadRing must share its first cache line");

}  // namespace gpuprobe::detail
