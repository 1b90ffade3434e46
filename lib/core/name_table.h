// Interning of run-time names into CallSites, kept for the session that used them and the next.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::core {

// Names belong to sessions. Each session may intern up to limit() names and 64 MiB of them;
// when the next session begins, the names that neither it nor the one before used are freed.
// A site therefore outlives the session that used it by one whole session: long enough for
// whatever still points to it (records of an ended session, which the collector discards
// unread; a range open across the boundary; a thread between interning and writing), since
// every such pointer is dropped by the end of the following session.
class NameTable {
 public:
  // The process-wide table. Never destroyed: threads may record during static destruction.
  static NameTable& get();

  // The site for (`name`, `category`), created on first use. When this session already
  // interned limit() names or 64 MiB, returns a shared "<name table full>" site and counts the
  // miss, so memory stays bounded when a program makes a new name per event.
  const CallSite* intern(std::string_view name, Category category) noexcept;

  // A session begins: names unused since the start of the previous one are freed, and this
  // session's allowance starts afresh. Threads' caches notice through generation().
  void begin_session() noexcept;
  // Bumped by begin_session(); a cached site from another generation must be looked up again.
  std::uint32_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }

  void set_limit(std::size_t limit) noexcept { limit_.store(limit, std::memory_order_relaxed); }
  std::size_t limit() const noexcept { return limit_.load(std::memory_order_relaxed); }

  // Events given the overflow site since the counter was last reset.
  std::uint64_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }
  void reset_overflowed() noexcept { overflowed_.store(0, std::memory_order_relaxed); }

  // Names held, and their bytes: those of this session and of the one before.
  std::size_t size() const;
  std::size_t bytes() const;

  // fork(): held across it (core/fork.cc), so that the child never inherits it locked.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }

 private:
  NameTable() = default;

  struct Entry {
    std::string key;  // the category byte, then the name: site.name points past the first byte
    CallSite site;
    std::uint32_t used = 0;  // the last generation that looked it up
  };

  mutable std::mutex mu_;
  std::unordered_map<std::string_view, std::unique_ptr<Entry>> by_key_;  // views into Entry::key
  std::size_t bytes_ = 0;                                                // of every name held
  std::size_t session_names_ = 0;  // names this generation used ...
  std::size_t session_bytes_ = 0;  // ... and their bytes, which the caps apply to
  std::atomic<std::uint32_t> generation_{1};
  std::atomic<std::size_t> limit_{65536};
  std::atomic<std::uint64_t> overflowed_{0};
};

}  // namespace gpuprobe::core
