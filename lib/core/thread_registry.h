// Hands out per-thread rings, takes them back when threads exit, and lets the collector find
// them. Rings are reused, so memory follows the number of threads recording at once, not how
// many threads ever recorded; and all rings together stay within the session's byte budget.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/detail/fixed_ring.hpp"

namespace gpuprobe::core {

// A ring with the bookkeeping only the registry and the collector use.
struct ThreadState : detail::ThreadRing {
  std::unique_ptr<detail::Record[]> slots;
  // Set by the owning thread when it stops writing (it exits, or moves to a newer session's
  // ring). Release pairs with the collector's acquire: after seeing it, the collector knows the
  // ring will not grow and may recycle it once drained.
  std::atomic<bool> released{false};
  // Constant while the ring is owned; written under the registry lock before it is handed out.
  std::uint32_t index = 0;  // row in the session's Stats::threads
  std::int64_t os_tid = 0;
  // The low 32 bits of pthread_self(): how CUPTI names the thread in API records.
  std::uint32_t pthread_id = 0;
  // Bumped (under the lock) whenever `name` changes, so the collector copies names only then.
  std::atomic<std::uint32_t> name_version{0};
  std::string name;  // guarded by the registry lock
};

class ThreadRegistry {
 public:
  // The process-wide registry. Never destroyed: threads may record during static destruction.
  static ThreadRegistry& get();

  // A session starts: rings are handed out for `epoch`, `capacity` records each, and thread
  // indices restart at 0. Rings of another capacity waiting for reuse are freed. An epoch not
  // above the last one (they wrapped) invalidates every ring still held. No ring is allocated
  // that would take the rings held past `max_bytes`.
  void begin_session(std::uint32_t epoch, std::uint64_t capacity, std::uint64_t max_bytes);
  // No session: acquire() returns nullptr until the next begin_session().
  void end_session();

  enum class Refusal : std::uint8_t {
    kNone,
    kNotCurrent,  // `epoch` is not the current session: nothing to record
    kNoMemory,    // the budget is spent (or the allocation failed): the event is lost
  };
  // Producer: a ring for the calling thread, or nullptr and why.
  ThreadState* acquire(std::uint32_t epoch, Refusal* why) noexcept;
  // Producer: the calling thread will not write to `ring` again.
  static void release(ThreadState* ring) noexcept;
  // Producer: renames the calling thread's ring.
  void rename(ThreadState* ring, std::string_view name) noexcept;

  // Collector: every ring currently handed out or released but not yet recycled.
  void snapshot(std::vector<ThreadState*>* out);
  // Collector: `ring` is released and drained; make it available to new threads.
  void recycle(ThreadState* ring);
  // Collector: a row in the session's Stats::threads for something that is not a ring (a
  // track), numbered with the rings'.
  std::uint32_t reserve_index();
  // Collector: a copy of `ring`'s name.
  std::string name_of(const ThreadState* ring);
  // Rings allocated and not freed, for tests that check reuse.
  std::size_t allocated() const;
  // Their bytes, which stay within the session's budget.
  std::uint64_t allocated_bytes() const;

  // Events lost this session because their thread had no ring (Refusal::kNoMemory). Any thread.
  void count_lost_without_ring() noexcept {
    lost_without_ring_.fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t lost_without_ring() const noexcept {
    return lost_without_ring_.load(std::memory_order_relaxed);
  }
  // Called, outside the lock, when a ring is refused for lack of budget: the collector drains
  // soon, which recycles the rings of exited threads. Set while a collector runs.
  void set_pressure_hook(void (*hook)(void*), void* arg);
  // Tests: called by a thread allocating its ring, after the lock is released.
  void set_allocation_hook_for_testing(void (*hook)()) { allocation_hook_.store(hook); }

  // fork(): held across it (core/fork.cc), so that the child never inherits it locked.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }

 private:
  ThreadRegistry() = default;

  mutable std::mutex mu_;
  std::vector<ThreadState*> live_;
  std::vector<std::unique_ptr<ThreadState>> free_;
  std::size_t allocated_ = 0;
  std::uint64_t allocated_bytes_ = 0;  // of allocated_ rings, and of those being allocated
  std::uint64_t max_bytes_ = ~std::uint64_t{0};
  std::atomic<std::uint64_t> lost_without_ring_{0};
  void (*pressure_hook_)(void*) = nullptr;
  void* pressure_arg_ = nullptr;
  std::atomic<void (*)()> allocation_hook_{nullptr};
  std::uint32_t epoch_ = 0;
  std::uint32_t last_epoch_ = 0;  // of the last begin_session(), to notice a wrap
  std::uint64_t capacity_ = 0;
  std::uint32_t next_index_ = 0;
};

}  // namespace gpuprobe::core
