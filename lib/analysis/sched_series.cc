#include "analysis/sched_series.h"

#include <algorithm>
#include <vector>

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
  // Each period's room for waiting: its length less what the thread ran in it, less what is
  // already placed there. A period's run-queue delay fills its own room, then the room of the
  // periods before it, latest first — a wait ends when the thread gets its CPU back and reaches
  // back from there, over quiet periods and into the end of one in which the thread also ran.
  std::vector<double> placed(n, 0.0);  // placed[i]: waiting placed in (t[i-1], t[i]]
  const auto room = [&](std::size_t i) {
    const double length = static_cast<double>(running_[i].at_ns - running_[i - 1].at_ns);
    const double ran = running_[i].total_ns - running_[i - 1].total_ns;
    return std::max(length - ran - placed[i], 0.0);
  };
  for (std::size_t i = 1; i < n; ++i) {
    double left = waiting_[i].total_ns - waiting_[i - 1].total_ns;
    if (left <= 0) continue;
    // The wait ended in period i and is one stretch back from there: through quiet periods,
    // and into the tail of the first one before them in which the thread ran or got a CPU back
    // — not past it.
    for (std::size_t k = i; k >= 1 && i - k < kMaxReach && left > 0; --k) {
      const double take = std::min(left, room(k));
      placed[k] += take;
      left -= take;
      const bool quiet = running_[k].total_ns == running_[k - 1].total_ns &&
                         waiting_[k].total_ns == waiting_[k - 1].total_ns;
      if (k < i && !quiet) break;
    }
    placed[i] += left;  // samples that disagree: left where it was seen
  }
  double total = waiting_[0].total_ns;
  for (std::size_t i = 1; i < n; ++i) {
    total += placed[i];
    waiting_[i].total_ns = total;
  }
}

}  // namespace gpuprobe::analysis
