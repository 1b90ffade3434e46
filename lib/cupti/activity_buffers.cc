#include "cupti/activity_buffers.h"

namespace gpuprobe::cupti {
namespace {

// CUPTI requires buffers aligned to 8 bytes (ACTIVITY_RECORD_ALIGNMENT).
constexpr std::size_t kAlignment = 8;

}  // namespace

ActivityBufferPool::ActivityBufferPool(std::size_t count, std::size_t bytes)
    : count_(count), bytes_((bytes + kAlignment - 1) / kAlignment * kAlignment) {
  // Value-initialized so every page is touched now, not while CUPTI waits for a buffer.
  storage_.reset(new std::uint8_t[count_ * bytes_ + kAlignment]());
  std::uint8_t* base = storage_.get();
  base += (kAlignment - reinterpret_cast<std::uintptr_t>(base) % kAlignment) % kAlignment;
  free_.reserve(count_);
  completed_.reserve(count_);
  taken_.reserve(count_);
  for (std::size_t i = count_; i-- > 0;) free_.push_back(base + i * bytes_);
}

std::uint8_t* ActivityBufferPool::acquire() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    ++exhausted_;
    return nullptr;
  }
  std::uint8_t* buffer = free_.back();
  free_.pop_back();
  return buffer;
}

void ActivityBufferPool::complete(std::uint8_t* buffer, std::size_t valid) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  completed_.push_back(Completed{buffer, valid});
}

std::uint64_t ActivityBufferPool::exhausted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exhausted_;
}

}  // namespace gpuprobe::cupti
