#include "gpu/cupti/activity_buffers.h"

#include <algorithm>
#include <new>

namespace gpuprobe::cupti {
namespace {

// CUPTI requires buffers aligned to 8 bytes (ACTIVITY_RECORD_ALIGNMENT); new[] gives at least 16.
constexpr std::size_t kAlignment = 8;

}  // namespace

ActivityBufferPool::ActivityBufferPool(std::size_t initial, std::size_t bytes,
                                       std::size_t max_bytes)
    : bytes_((bytes + kAlignment - 1) / kAlignment * kAlignment),
      capacity_(std::max(initial, max_bytes / bytes_)) {
  // Every vector holds the cap's worth of pointers now, so that no later call allocates for them.
  storage_.reserve(capacity_);
  free_.reserve(capacity_);
  completed_.reserve(capacity_);
  taken_.reserve(capacity_);
  for (std::size_t i = 0; i < initial; ++i) {
    // Value-initialized so every page is touched now, not while CUPTI waits for a buffer.
    storage_.emplace_back(new std::uint8_t[bytes_]());
    free_.push_back(storage_.back().get());
  }
}

std::uint8_t* ActivityBufferPool::allocate_locked() noexcept {
  if (storage_.size() >= capacity_) return nullptr;
  // Not zeroed: CUPTI writes what it hands back; the pages are touched as records arrive.
  std::uint8_t* buffer = new (std::nothrow) std::uint8_t[bytes_];
  if (buffer != nullptr) storage_.emplace_back(buffer);  // capacity reserved: cannot throw
  return buffer;
}

std::uint8_t* ActivityBufferPool::acquire() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  std::uint8_t* buffer = nullptr;
  if (!free_.empty()) {
    buffer = free_.back();
    free_.pop_back();
  } else {
    buffer = allocate_locked();
  }
  if (buffer == nullptr) {
    ++exhausted_;
    return nullptr;
  }
  peak_in_use_ = std::max(peak_in_use_, ++in_use_);
  return buffer;
}

void ActivityBufferPool::complete(std::uint8_t* buffer, std::size_t valid) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  completed_.push_back(Completed{buffer, valid});
}

std::size_t ActivityBufferPool::abandon_held() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t held = 0;
  for (std::unique_ptr<std::uint8_t[]>& buffer : storage_) {
    std::uint8_t* p = buffer.get();
    if (p == nullptr) continue;  // abandoned before
    const bool returned = std::find(free_.begin(), free_.end(), p) != free_.end() ||
                          std::any_of(completed_.begin(), completed_.end(),
                                      [p](const Completed& c) { return c.buffer == p; });
    if (!returned) {
      static_cast<void>(buffer.release());  // left to CUPTI
      ++held;
    }
  }
  return held;
}

std::size_t ActivityBufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return storage_.size();
}

std::size_t ActivityBufferPool::peak_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_in_use_;
}

std::uint64_t ActivityBufferPool::exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exhausted_;
}

}  // namespace gpuprobe::cupti
