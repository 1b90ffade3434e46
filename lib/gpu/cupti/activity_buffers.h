// The CUPTI activity buffers of a session: CUPTI asks for one (any thread, possibly inside a CUDA
// call), hands it back full, and the collector parses it and returns it to the pool.
//
// Why it grows: CUPTI keeps a buffer per thread that calls CUDA (and per context for device
// records), so the buffers in use at once grow with the program's threads, not with its event
// rate. A fixed pool sized for one thread loses records in ordinary multi-threaded programs. The
// pool therefore starts with `initial` buffers, allocated and touched at start, and allocates more
// on demand up to `max_bytes` in all; only past that cap is a request refused (counted), and CUPTI
// then drops records, which it counts too. Buffers are kept until the session ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpuprobe::cupti {

class ActivityBufferPool {
 public:
  // `initial` buffers of `bytes` now; more on demand while the total stays within `max_bytes`.
  ActivityBufferPool(std::size_t initial, std::size_t bytes, std::size_t max_bytes);

  // CUPTI's request: a free buffer, a new one, or nullptr (counted) at the cap.
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
    in_use_ -= taken_.size();
    taken_.clear();
  }

  // After CUPTI is released: the buffers it took and never handed back are left allocated when
  // the pool goes — CUPTI may still write into one, or give it to the next subscriber, and a
  // freed buffer would then corrupt the heap. Returns how many.
  std::size_t abandon_held() noexcept;

  std::size_t buffer_bytes() const noexcept { return bytes_; }
  // The most buffers the pool may hold (max_bytes / bytes, at least `initial`).
  std::size_t capacity() const noexcept { return capacity_; }
  // Buffers allocated so far, and the most that were with CUPTI or the collector at once.
  std::size_t allocated() const;
  std::size_t peak_in_use() const;
  // Requests refused at the cap.
  std::uint64_t exhausted() const;

 private:
  struct Completed {
    std::uint8_t* buffer;
    std::size_t valid;
  };

  std::uint8_t* allocate_locked() noexcept;

  const std::size_t bytes_;
  const std::size_t capacity_;
  mutable std::mutex mu_;  // held briefly: a few pointer moves per buffer of ~MiBs of records
  std::vector<std::unique_ptr<std::uint8_t[]>> storage_;
  std::vector<std::uint8_t*> free_;
  std::vector<Completed> completed_;
  std::vector<Completed> taken_;  // collector-only
  std::size_t in_use_ = 0;
  std::size_t peak_in_use_ = 0;
  std::uint64_t exhausted_ = 0;
};

}  // namespace gpuprobe::cupti
