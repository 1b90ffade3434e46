#include "gpu/launch_matcher.h"

#include <algorithm>

namespace gpuprobe::gpu {

void LaunchMatcher::check(std::uint64_t launch_start, std::uint64_t work_start) {
  if (work_start < launch_start) ++before_launch_;
}

void LaunchMatcher::on_launch(std::uint32_t correlation, std::uint64_t start) {
  newest_ = std::max(newest_, start);
  if (const auto it = works_.find(correlation); it != works_.end()) {
    check(start, it->second);
    works_.erase(it);
    return;
  }
  launches_[correlation] = start;
}

void LaunchMatcher::on_work(std::uint32_t correlation, std::uint64_t start) {
  newest_ = std::max(newest_, start);
  // A graph launch or a cooperative launch has several pieces of work under one correlation id:
  // each is checked against the launch, which stays for the others until pruned.
  if (const auto it = launches_.find(correlation); it != launches_.end()) {
    check(it->second, start);
    return;
  }
  // Several pieces of work waiting for one launch are checked by the earliest of them.
  const auto [it, inserted] = works_.try_emplace(correlation, start);
  if (!inserted) it->second = std::min(it->second, start);
}

void LaunchMatcher::prune() {
  const std::uint64_t cutoff = newest_ > horizon_ ? newest_ - horizon_ : 0;
  const auto old = [cutoff](const auto& entry) { return entry.second < cutoff; };
  for (auto it = launches_.begin(); it != launches_.end();)
    it = old(*it) ? launches_.erase(it) : std::next(it);
  for (auto it = works_.begin(); it != works_.end();)
    it = old(*it) ? works_.erase(it) : std::next(it);
}

}  // namespace gpuprobe::gpu
