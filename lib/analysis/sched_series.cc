#include "analysis/sched_series.h"

#include <algorithm>
#include <utility>

namespace gpuprobe::analysis {

void SchedSeries::finish() {
  const auto by_time = [](const Sample& a, const Sample& b) { return a.at_ns < b.at_ns; };
  std::stable_sort(running_.begin(), running_.end(), by_time);
  std::stable_sort(waiting_.begin(), waiting_.end(), by_time);
  place_waits_back();
}

std::int64_t SchedSeries::first_ns() const {
  return std::min(running_.front().at_ns, waiting_.front().at_ns);
}

std::int64_t SchedSeries::last_ns() const {
  return std::max(running_.back().at_ns, waiting_.back().at_ns);
}

double SchedSeries::at(const std::vector<Sample>& s, std::int64_t t) {
  const auto it = std::lower_bound(s.begin(), s.end(), t,
                                   [](const Sample& x, std::int64_t v) { return x.at_ns < v; });
  if (it == s.begin()) return s.front().total_ns;
  if (it == s.end()) return s.back().total_ns;
  const Sample& a = *(it - 1);
  const Sample& b = *it;
  if (b.at_ns == a.at_ns) return b.total_ns;
  return a.total_ns + (b.total_ns - a.total_ns) * static_cast<double>(t - a.at_ns) /
                          static_cast<double>(b.at_ns - a.at_ns);
}

void SchedSeries::place_waits_back() {
  // The sampler records both counters at the same times; a series that does not (a trace
  // edited, or cut by a window) is read as sampled.
  const std::size_t n = running_.size();
  if (n != waiting_.size() || n < 2) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (running_[i].at_ns != waiting_[i].at_ns) return;
  }
  std::vector<Sample> running, waiting;
  running.reserve(n + n / 2);
  waiting.reserve(n + n);
  running.push_back(running_[0]);
  waiting.push_back(waiting_[0]);
  for (std::size_t i = 1; i < n; ++i) {
    const std::int64_t t0 = running_[i - 1].at_ns, t1 = running_[i].at_ns;
    const double ran = running_[i].total_ns - running_[i - 1].total_ns;
    const double waited = waiting_[i].total_ns - waiting_[i - 1].total_ns;
    if (waited > 0 && t1 > t0) {
      // It got its CPU back when it began to run what it ran before the next sample.
      const std::int64_t back =
          std::clamp<std::int64_t>(t1 - static_cast<std::int64_t>(ran), t0, t1);
      // How far back the wait may reach: over the samples before in which neither counter moved.
      std::size_t k = i - 1;
      while (k > 0 && running_[k].total_ns == running_[k - 1].total_ns &&
             waiting_[k].total_ns == waiting_[k - 1].total_ns)
        --k;
      const std::int64_t earliest = running_[k].at_ns;
      const auto placed =
          std::min<std::int64_t>(static_cast<std::int64_t>(waited), back - earliest);
      if (placed > 0) {
        const std::int64_t from = back - placed;
        const double before = waiting_[i - 1].total_ns;
        // The quiet samples inside the wait said "unchanged", which the jump corrects.
        while (waiting.size() > 1 && waiting.back().at_ns > from &&
               waiting.back().total_ns == before)
          waiting.pop_back();
        waiting.push_back({from, before});
        waiting.push_back({back, before + static_cast<double>(placed)});
        running.push_back({back, running_[i - 1].total_ns});
      }
    }
    running.push_back(running_[i]);
    waiting.push_back(waiting_[i]);
  }
  running_ = std::move(running);
  waiting_ = std::move(waiting);
}

}  // namespace gpuprobe::analysis
