// Matches GPU work to the API call that launched it, by CUPTI correlation id, to check the clock:
// work that starts before its launch call started means the two sides disagree on time. Records
// of either side may arrive first (they come in different buffers), so both wait, bounded.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace gpuprobe::gpu {

class LaunchMatcher {
 public:
  // Unmatched entries older than `horizon` ticks behind the newest are forgotten at prune().
  explicit LaunchMatcher(std::uint64_t horizon_ticks) : horizon_(horizon_ticks) {}

  void on_launch(std::uint32_t correlation, std::uint64_t start);
  void on_work(std::uint32_t correlation, std::uint64_t start);
  // Forgets what can no longer match (API calls without GPU work, such as cudaMalloc).
  void prune();

  std::uint64_t starts_before_launch() const { return before_launch_; }
  std::size_t pending() const { return launches_.size() + works_.size(); }

 private:
  void check(std::uint64_t launch_start, std::uint64_t work_start);

  std::uint64_t horizon_;
  std::uint64_t newest_ = 0;
  std::unordered_map<std::uint32_t, std::uint64_t> launches_;  // correlation -> launch start
  std::unordered_map<std::uint32_t, std::uint64_t> works_;     // correlation -> earliest work start
  std::uint64_t before_launch_ = 0;
};

}  // namespace gpuprobe::gpu
