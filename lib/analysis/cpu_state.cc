#include "analysis/cpu_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "formats/sched_counters.h"

namespace gpuprobe::analysis {

namespace sc = formats::sched_counters;

void CpuState::add(const ReportEvent& r) {
  const Event& e = *r.event;
  if (e.type == EventType::kCounter) {
    std::int64_t tid = 0;
    const int kind = sc::parse(e.site->name, &tid);
    if (kind == 0) return;
    SchedSeries& s = series_[tid];
    if (kind == 1) {
      s.add_running(r.begin_ns, e.value);
    } else {
      s.add_waiting(r.begin_ns, e.value);
    }
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
  for (auto& [tid, s] : series_) {
    s.finish();
    if (!s.empty()) last_sample_ns_ = std::max(last_sample_ns_, s.last_ns());
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const KeptRange& a, const KeptRange& b) { return a.begin < b.begin; });
}

CpuState::Activity CpuState::activity(std::int64_t tid, std::int64_t begin,
                                      std::int64_t end) const {
  const auto it = series_.find(tid);
  if (it == series_.end() || it->second.empty() || end > last_sample_ns_) return {};
  // A thread first listed after `begin` (the sampler lists threads every ten periods): what it
  // did from its first sample on, a lower bound.
  begin = std::max(begin, it->second.first_ns());
  if (begin >= end) return {};
  const auto ns = [](double v) { return std::max<std::int64_t>(static_cast<std::int64_t>(v), 0); };
  return {ns(it->second.running(begin, end)), ns(it->second.waiting(begin, end))};
}

CpuSplit CpuState::split(std::int64_t tid, std::int64_t begin, std::int64_t end) const {
  CpuSplit out;
  const auto it = series_.find(tid);
  // Known only when samples bracket the span: before the thread's first sample its totals may be
  // anything, and past the last sampling of all threads nothing was read.
  if (it == series_.end() || it->second.empty() || it->second.first_ns() > begin ||
      end > last_sample_ns_ || end <= begin)
    return out;
  const SchedSeries& s = it->second;
  const std::int64_t span = end - begin;
  out.known = true;
  out.running_ns =
      std::clamp<std::int64_t>(static_cast<std::int64_t>(s.running(begin, end)), 0, span);
  out.waiting_ns = std::clamp<std::int64_t>(static_cast<std::int64_t>(s.waiting(begin, end)), 0,
                                            span - out.running_ns);
  out.blocked_ns = span - out.running_ns - out.waiting_ns;
  const std::vector<ThreadInfo>& threads = trace_->stats->threads;
  const auto thread_of_tid = [&](std::int64_t os_tid) -> std::string {
    for (const ThreadInfo& t : threads) {
      if (t.os_tid == os_tid) return t.name.empty() ? "thread " + std::to_string(os_tid) : t.name;
    }
    return "thread " + std::to_string(os_tid);
  };
  for (const auto& [other, series] : series_) {
    if (other == tid || series.empty()) continue;
    const auto ran = static_cast<std::int64_t>(series.running(begin, end));
    if (ran > out.busiest_running_ns) {
      out.busiest_running_ns = std::min(ran, span);
      out.busiest_thread = thread_of_tid(other);
    }
  }
  if (out.blocked_ns > 0) find_holder(tid, begin, end, &out);
  return out;
}

void CpuState::find_holder(std::int64_t tid, std::int64_t begin, std::int64_t end,
                           CpuSplit* out) const {
  const std::vector<ThreadInfo>& threads = trace_->stats->threads;
  // The other threads' ranges overlapping the span, and its own thread's (the places it waited
  // at); ranges_ is sorted by begin, and a range that overlaps began before `end`. None that
  // began more than the longest range before `begin` reaches it.
  const auto by_begin = [](const KeptRange& k, std::int64_t t) { return k.begin < t; };
  const auto last = std::lower_bound(ranges_.begin(), ranges_.end(), end, by_begin);
  const auto first = std::lower_bound(ranges_.begin(), last, begin - longest_, by_begin);
  struct Candidate {
    const KeptRange* range;
    std::int64_t shared;
    Activity did;
    bool same_place;
  };
  std::vector<Candidate> others;
  std::set<std::string_view> own;
  for (auto k = first; k != last; ++k) {
    if (k->end <= begin || k->thread >= threads.size()) continue;
    if (threads[k->thread].os_tid == tid) {
      own.insert(k->name);
      continue;
    }
    const std::int64_t from = std::max(begin, k->begin), to = std::min(end, k->end);
    others.push_back({&*k, to - from, activity(threads[k->thread].os_tid, from, to), false});
  }
  // Fellow waiters: threads all of whose ranges here are named as this thread's own (waiting at
  // the same place), off a CPU for most of the longest.
  struct Thread {
    bool same_place = true;
    const Candidate* longest = nullptr;
  };
  std::map<std::uint32_t, Thread> by_thread;
  for (Candidate& c : others) {
    c.same_place = own.count(c.range->name) > 0;
    Thread& t = by_thread[c.range->thread];
    t.same_place = t.same_place && c.same_place;
    if (t.longest == nullptr || c.shared > t.longest->shared) t.longest = &c;
  }
  std::set<std::uint32_t> waiters;
  for (const auto& [thread, t] : by_thread) {
    // Runnable (on a CPU or waiting for one) for half of it: not waiting at the same place.
    const Activity& did = t.longest->did;
    if (t.same_place && did.running >= 0 && (did.running + did.waiting) * 2 < t.longest->shared)
      waiters.insert(thread);
  }
  const std::int64_t covers = out->blocked_ns * 9 / 10;
  const Candidate* best = nullptr;
  for (const Candidate& c : others) {
    if (waiters.count(c.range->thread) > 0) continue;
    const auto length = [](const Candidate* x) { return x->range->end - x->range->begin; };
    if (best == nullptr || (c.shared >= covers ? best->shared < covers || length(&c) < length(best)
                                               : best->shared < covers && c.shared > best->shared))
      best = &c;
  }
  if (best == nullptr) {
    // Only fellow waiters: the first to arrive got what the others wait for.
    for (const Candidate& c : others) {
      if (c.same_place && (best == nullptr || c.range->begin < best->range->begin)) best = &c;
    }
  }
  if (best == nullptr) return;
  waiters.erase(best->range->thread);
  out->holder_range = best->range->name;
  out->holder_thread = threads[best->range->thread].name;
  out->holder_overlap_ns = best->shared;
  out->holder_running_ns = best->did.running;
  out->holder_waiting_ns = best->did.waiting;
  out->other_waiters = static_cast<int>(waiters.size());
}

void CpuState::write_json(const TraceContext&, nlohmann::json* report) const {
  (*report)["cpu_state"] = {{"threads_sampled", series_.size()},
                            {"ranges_left_out", ranges_left_out_}};
}

}  // namespace gpuprobe::analysis
