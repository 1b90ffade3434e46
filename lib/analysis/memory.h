// Allocator pressure: the CUDA caching allocator's counters (gpuprobe.torch's "cuda allocated
// bytes", "cuda reserved bytes", "cuda inactive split bytes", "cuda alloc retries") over time —
// fragmentation as the share of reserved memory not allocated — and cudaMalloc/cudaFree calls;
// and for each of the jitter's outliers, the allocator's state at it and what it did within it
// (calls, retries), so that an outlier caused by the allocator shows it. For the report page,
// also the states over time (Memory's over_time_points): every one, or past that many, the most
// fragmented of each of that many equal slices of time — a spike is what the page must show.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/jitter.h"

namespace gpuprobe::analysis {

struct MemoryState {
  std::int64_t at_ns = 0;
  double allocated = -1, reserved = -1, inactive_split = -1, retries = -1;  // -1: not sampled
  // (reserved - allocated) / reserved: what the allocator holds and does not use.
  double fragmentation() const {
    return reserved > 0 && allocated >= 0 ? (reserved - allocated) / reserved : -1;
  }
};

struct OutlierMemory {
  std::int64_t begin_ns = 0;
  MemoryState state;  // the last sample before the outlier ended; at_ns 0 without one
  std::uint64_t malloc_calls = 0, free_calls = 0;  // cudaMalloc/cudaFree (and cuMem*) within it
  double retries = 0;                              // alloc retries counted within it
};

struct MemoryResult {
  std::uint64_t samples = 0;  // the times the counters were read
  double max_allocated = 0, max_reserved = 0, max_inactive_split = 0;
  double fragmentation_p50 = -1, fragmentation_max = -1, fragmentation_last = -1;
  double retries = 0;  // the last value of the retries counter
  std::uint64_t malloc_calls = 0, free_calls = 0;
  std::vector<OutlierMemory> outliers;  // as the jitter's, in its order
  std::vector<MemoryState> over_time;   // in time order; empty unless asked
};

// The report's "memory" line: the caching allocator's peaks, fragmentation and calls; empty
// without allocator samples or calls.
Section describe_memory(const MemoryResult& m);
// What the allocator did within an outlier and its state then, as the line the jitter section
// says beneath the outlier; "" when there is nothing to say.
std::string describe_outlier_memory(const OutlierMemory& m);

class Memory : public Analysis {
 public:
  // over_time_points: how many states MemoryResult::over_time holds at most; 0: none.
  Memory(const Jitter& jitter, std::size_t over_time_points)
      : jitter_(jitter), over_time_points_(over_time_points) {}

  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const MemoryResult& result() const { return result_; }

 private:
  static constexpr std::size_t kMaxSamples = 1 << 20;  // beyond: the later ones are not kept
  const Jitter& jitter_;
  const std::size_t over_time_points_;
  struct Sample {
    std::int64_t at_ns;
    double MemoryState::*counter;
    double value;
  };
  std::vector<Sample> samples_;      // as they come
  std::vector<MemoryState> states_;  // one per sample, in time order, each with every counter's
                                     // latest value (finish())
  std::vector<std::int64_t> mallocs_, frees_;  // the calls' begin times
  MemoryResult result_;
  void sample_over_time();
};

}  // namespace gpuprobe::analysis
