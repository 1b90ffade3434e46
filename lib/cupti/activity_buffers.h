// A fixed pool of CUPTI activity buffers, allocated when a session starts and reused: CUPTI asks
// for one (any thread, possibly inside a CUDA call), hands it back full, and the collector parses
// it and returns it to the pool. No allocation after start; exhaustion is counted, and CUPTI
// then drops records, which it also counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpuprobe::cupti {

class ActivityBufferPool {
 public:
  ActivityBufferPool(std::size_t count, std::size_t bytes);

  // CUPTI's request: a free buffer, or nullptr (counted) when all are in use.
  std::uint8_t* acquire() noexcept;
  // CUPTI's completion: `valid` bytes of records wait in `buffer` for the collector.
  void complete(std::uint8_t* buffer, std::size_t valid) noexcept;

  // Collector: calls `parse(buffer, valid)` for every completed buffer, then frees them.
  template <class Parse>
  void consume(Parse&& parse) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      taken_.swap(completed_);  // both have capacity for every buffer: no allocation
    }
    for (const Completed& c : taken_) parse(c.buffer, c.valid);
    std::lock_guard<std::mutex> lock(mu_);
    for (const Completed& c : taken_) free_.push_back(c.buffer);
    taken_.clear();
  }

  std::size_t buffer_bytes() const noexcept { return bytes_; }
  std::size_t count() const noexcept { return count_; }
  // Requests that found no free buffer.
  std::uint64_t exhausted() const;

 private:
  struct Completed {
    std::uint8_t* buffer;
    std::size_t valid;
  };

  const std::size_t count_;
  const std::size_t bytes_;
  std::unique_ptr<std::uint8_t[]> storage_;
  mutable std::mutex mu_;  // held briefly: a few pointer moves per buffer of ~MiBs of records
  std::vector<std::uint8_t*> free_;
  std::vector<Completed> completed_;
  std::vector<Completed> taken_;  // collector-only
  std::uint64_t exhausted_ = 0;
};

}  // namespace gpuprobe::cupti
