// Interning of run-time names into CallSites that live for the whole process.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::core {

class NameTable {
 public:
  // The process-wide table. Never destroyed: sites must outlive every event that points to them.
  static NameTable& get();

  // The site for (`name`, `category`), created on first use. When the table already holds
  // limit() names, returns a shared "<name table full>" site and counts the miss, so memory
  // stays bounded when a program makes a new name per event.
  const CallSite* intern(std::string_view name, Category category) noexcept;

  void set_limit(std::size_t limit) noexcept { limit_.store(limit, std::memory_order_relaxed); }
  std::size_t limit() const noexcept { return limit_.load(std::memory_order_relaxed); }

  // Events given the overflow site since the counter was last reset.
  std::uint64_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }
  void reset_overflowed() noexcept { overflowed_.store(0, std::memory_order_relaxed); }

  std::size_t size() const;

  // fork(): held across it (core/fork.cc), so that the child never inherits it locked.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }

 private:
  NameTable() = default;

  struct Entry {
    std::string name;
    CallSite site;
  };

  mutable std::mutex mu_;
  std::deque<Entry> entries_;                                // a deque, so sites never move
  std::size_t bytes_ = 0;                                    // of the names in entries_
  std::unordered_map<std::string, const CallSite*> by_key_;  // key: category byte + name
  std::atomic<std::size_t> limit_{65536};
  std::atomic<std::uint64_t> overflowed_{0};
};

}  // namespace gpuprobe::core
