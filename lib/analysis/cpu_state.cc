#include "analysis/cpu_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "formats/sched_counters.h"

namespace gpuprobe::analysis {

namespace sc = formats::sched_counters;

void CpuState::add(const ReportEvent& r) {
  const Event& e = *r.event;
  if (e.type == EventType::kCounter) {
    std::int64_t tid = 0;
    const int kind = sc::parse(e.site->name, &tid);
    if (kind == 0) return;
    Series& s = series_[tid];
    (kind == 1 ? s.running : s.waiting).push_back({r.begin_ns, e.value});
  } else if (e.type == EventType::kRange && r.row != nullptr &&
             r.end_ns - r.begin_ns >= kMinRangeNs) {
    if (ranges_.size() < kMaxRanges) {
      ranges_.push_back({r.begin_ns, r.end_ns, e.thread, e.site->name});
      longest_ = std::max(longest_, r.end_ns - r.begin_ns);
    } else {
      ++ranges_left_out_;
    }
  }
}

void CpuState::finish(const TraceContext& trace) {
  trace_ = &trace;
  const auto by_time = [](const Sample& a, const Sample& b) { return a.at_ns < b.at_ns; };
  for (auto& [tid, s] : series_) {
    std::sort(s.running.begin(), s.running.end(), by_time);
    std::sort(s.waiting.begin(), s.waiting.end(), by_time);
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const KeptRange& a, const KeptRange& b) { return a.begin < b.begin; });
}

double CpuState::at(const std::vector<Sample>& s, std::int64_t t) {
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

CpuSplit CpuState::split(std::int64_t tid, std::int64_t begin, std::int64_t end) const {
  CpuSplit out;
  const auto it = series_.find(tid);
  // Known only when samples bracket the span: before it, the thread's totals may be anything.
  if (it == series_.end() || it->second.running.empty() || it->second.waiting.empty() ||
      it->second.running.front().at_ns > begin || end <= begin)
    return out;
  const Series& s = it->second;
  const std::int64_t span = end - begin;
  out.known = true;
  out.running_ns = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(at(s.running, end) - at(s.running, begin)), 0, span);
  out.waiting_ns =
      std::clamp<std::int64_t>(static_cast<std::int64_t>(at(s.waiting, end) - at(s.waiting, begin)),
                               0, span - out.running_ns);
  out.blocked_ns = span - out.running_ns - out.waiting_ns;
  const std::vector<ThreadInfo>& threads = trace_->stats->threads;
  const auto thread_of_tid = [&](std::int64_t os_tid) -> std::string {
    for (const ThreadInfo& t : threads) {
      if (t.os_tid == os_tid) return t.name.empty() ? "thread " + std::to_string(os_tid) : t.name;
    }
    return "thread " + std::to_string(os_tid);
  };
  for (const auto& [other, series] : series_) {
    if (other == tid || series.running.empty()) continue;
    const auto ran = static_cast<std::int64_t>(at(series.running, end) - at(series.running, begin));
    if (ran > out.busiest_running_ns) {
      out.busiest_running_ns = std::min(ran, span);
      out.busiest_thread = thread_of_tid(other);
    }
  }
  // The other threads' ranges overlapping the span; ranges_ is sorted by begin, and a range
  // that overlaps began before `end`.
  const auto by_begin = [](const KeptRange& k, std::int64_t t) { return k.begin < t; };
  const auto last = std::lower_bound(ranges_.begin(), ranges_.end(), end, by_begin);
  // None that began more than the longest range before `begin` reaches it.
  for (auto k = std::lower_bound(ranges_.begin(), last, begin - longest_, by_begin); k != last;
       ++k) {
    if (k->end <= begin || k->thread >= threads.size() || threads[k->thread].os_tid == tid)
      continue;
    const std::int64_t shared = std::min(end, k->end) - std::max(begin, k->begin);
    if (shared > out.holder_overlap_ns) {
      out.holder_overlap_ns = shared;
      out.holder_range = k->name;
      out.holder_thread = threads[k->thread].name;
    }
  }
  return out;
}

void CpuState::write_json(const TraceContext&, nlohmann::json* report) const {
  (*report)["cpu_state"] = {{"threads_sampled", series_.size()},
                            {"ranges_left_out", ranges_left_out_}};
}

}  // namespace gpuprobe::analysis
