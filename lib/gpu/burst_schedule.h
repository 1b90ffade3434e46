// When GPU activity is recorded under `gpu_burst=ON/EVERY`: for ON out of every EVERY, the first
// burst at the session's start, and also until any moment asked for with record_until() — the
// flight recorder asks for the time after a dump's moment, so that every dump has the GPU work
// that followed its trigger. Why bursts: CUPTI's cost is paid on every launch while it records
// (run 27: cupti=all adds 0.41 ms to a 2 ms request); a production process that keeps metrics and
// a flight recorder all the time can afford it one second in sixty, not always.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuprobe::gpu {

class BurstSchedule {
 public:
  // Times in ticks of the session's clock. `every` 0: recording all the time.
  BurstSchedule(std::uint64_t start, std::uint64_t on, std::uint64_t every) noexcept
      : start_(start), on_(on), every_(every) {}

  // Whether recording comes and goes (gpu_burst= was given).
  bool sampled() const noexcept { return every_ != 0; }

  // Keep recording until `tick` at least. Any thread.
  void record_until(std::uint64_t tick) noexcept {
    std::uint64_t seen = until_.load(std::memory_order_relaxed);
    while (seen < tick && !until_.compare_exchange_weak(seen, tick, std::memory_order_relaxed)) {
    }
  }

  // Whether GPU activity is to be recorded at `now`.
  bool recording_at(std::uint64_t now) const noexcept {
    if (every_ == 0) return true;
    if (now < until_.load(std::memory_order_relaxed)) return true;
    return now < start_ || (now - start_) % every_ < on_;
  }

 private:
  const std::uint64_t start_, on_, every_;
  std::atomic<std::uint64_t> until_{0};
};

}  // namespace gpuprobe::gpu
