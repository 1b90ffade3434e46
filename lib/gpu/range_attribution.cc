#include "gpu/range_attribution.h"

#include <algorithm>
#include <iterator>

namespace gpuprobe::gpu {
namespace {

bool is_api(const GpuActivity& a) {
  return a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi;
}

}  // namespace

void RangeAttribution::add_thread(std::uint32_t cupti_thread_id, std::int64_t os_tid) {
  os_tids_[cupti_thread_id] = os_tid;
}

void RangeAttribution::thread_state(std::int64_t os_tid, bool idle, std::uint64_t now) {
  if (idle) {
    idle_since_[os_tid] = now;
  } else {
    idle_since_.erase(os_tid);
  }
}

void RangeAttribution::add_range(std::int64_t os_tid, std::uint64_t begin, std::uint64_t end,
                                 const CallSite* site) {
  auto& ranges = ranges_[os_tid];
  ranges.emplace(begin, Range{end, site});
  if (ranges.size() > options_.max_ranges_per_thread) ranges.erase(ranges.begin());
}

void RangeAttribution::add_activity(const GpuActivity& activity) {
  if (is_api(activity)) {
    // Several API calls can share a correlation id (a runtime call and the driver call it
    // makes): the first one stands for the launch.
    launches_.try_emplace(activity.correlation, Launch{activity.start, nullptr, false});
  }
  pending_.push_back(Pending{activity, false, 0});
}

const CallSite* RangeAttribution::find_range(std::int64_t os_tid, std::uint64_t start,
                                             std::uint64_t end) const {
  const auto thread = ranges_.find(os_tid);
  if (thread == ranges_.end()) return nullptr;
  // Walk back from the latest range that began at or before the call; siblings that ended
  // before it are skipped; the first that covers the call is the innermost.
  const auto& ranges = thread->second;
  for (auto it = ranges.upper_bound(start); it != ranges.begin();) {
    --it;
    if (it->second.end >= end) return it->second.site;
  }
  return nullptr;
}

void RangeAttribution::settle(Pending& p, const CallSite* range) {
  p.activity.range = range;
  p.settled = true;
}

void RangeAttribution::release(std::uint64_t now, bool final, std::vector<GpuActivity>* out) {
  const std::uint64_t cutoff = now > options_.horizon_ticks ? now - options_.horizon_ticks : 0;
  // Bounded memory: beyond max_pending, the oldest activities go out now, without a range.
  std::size_t excess =
      pending_.size() > options_.max_pending ? pending_.size() - options_.max_pending : 0;
  for (std::size_t i = 0; i < pending_.size() && excess > 0; ++i) {
    if (!pending_[i].settled) {
      settle(pending_[i], nullptr);
      --excess;
    }
  }
  // API calls first, so that the GPU work they launched settles in the same pass.
  for (Pending& p : pending_) {
    GpuActivity& a = p.activity;
    if (p.settled || !is_api(a)) continue;
    ++p.releases;
    // A thread is known from its first range's open. One that was not known when its call was
    // collected may have opened that range just after the collector looked: it gets one more
    // drain, then it has none.
    if (a.os_tid == 0) {
      if (const auto it = os_tids_.find(a.thread_id); it != os_tids_.end()) a.os_tid = it->second;
    }
    const CallSite* range = a.os_tid != 0 ? find_range(a.os_tid, a.start, a.end) : nullptr;
    bool none = a.os_tid == 0 && p.releases >= 2;
    if (a.os_tid != 0 && range == nullptr) {
      const auto idle = idle_since_.find(a.os_tid);
      none = idle != idle_since_.end() && idle->second >= a.end;
    }
    if (range != nullptr || none || a.end < cutoff || final) {
      settle(p, range);
      if (auto it = launches_.find(a.correlation); it != launches_.end() && !it->second.settled) {
        it->second = Launch{it->second.start, range, true};
      }
    }
  }
  for (Pending& p : pending_) {
    const GpuActivity& a = p.activity;
    if (p.settled || is_api(a)) continue;
    const auto launch = launches_.find(a.correlation);
    if (launch != launches_.end() && launch->second.settled) {
      settle(p, launch->second.range);
    } else if (a.start < cutoff || final) {
      settle(p, nullptr);
    }
  }
  for (const Pending& p : pending_) {
    if (!p.settled) continue;
    if (p.activity.range != nullptr) {
      ++attributed_;
    } else {
      ++unattributed_;
    }
    out->push_back(p.activity);
  }
  pending_.erase(
      std::remove_if(pending_.begin(), pending_.end(), [](const Pending& p) { return p.settled; }),
      pending_.end());
  forget_before(cutoff);
}

void RangeAttribution::forget_before(std::uint64_t cutoff) {
  // Keep what a pending activity may still need: ranges and launches from its time on.
  std::uint64_t keep_from = cutoff;
  for (const Pending& p : pending_) keep_from = std::min(keep_from, p.activity.start);
  for (auto it = launches_.begin(); it != launches_.end();) {
    it = it->second.start < keep_from ? launches_.erase(it) : std::next(it);
  }
  for (auto& [tid, ranges] : ranges_) {
    for (auto it = ranges.begin(); it != ranges.end() && it->first < keep_from;) {
      it = it->second.end < keep_from ? ranges.erase(it) : std::next(it);
    }
  }
}

}  // namespace gpuprobe::gpu
