// Attributes GPU activity to gpuprobe ranges without any work on the recording path:
// GPU work -> its CUPTI correlation id -> the API call that launched it -> the calling thread and
// time -> the innermost gpuprobe range that was open on that thread around the call.
//
// Ranges reach the collector when they close, and an outer range closes long after the launches
// inside it, so activities wait here until the range around their launch is known. Nesting makes
// the innermost containing range the one with the latest begin among those that contain the call.
// An activity whose launch no closed range contains within the horizon is released unattributed,
// so the wait — and the memory it holds — is bounded.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe::gpu {

class RangeAttribution {
 public:
  struct Options {
    std::uint64_t horizon_ticks;        // how long an activity waits for its range
    std::size_t max_ranges_per_thread;  // older ranges are forgotten beyond this
    std::size_t max_pending;            // older activities are released unattributed beyond this
  };

  explicit RangeAttribution(const Options& options) : options_(options) {}

  // A thread that records: CUPTI names it by `cupti_thread_id` (the low 32 bits of its
  // pthread_self()), CPU events by `os_tid`. API calls from a thread not known yet wait for it.
  void add_thread(std::uint32_t cupti_thread_id, std::int64_t os_tid);

  // What the collector saw of a thread before draining it at `now`: whether it had no range
  // open. A call on an idle thread that ended before `now` and lies in no closed range has none.
  void thread_state(std::int64_t os_tid, bool idle, std::uint64_t now);

  // A closed range on the thread whose gettid() is `os_tid`.
  void add_range(std::int64_t os_tid, std::uint64_t begin, std::uint64_t end, const CallSite* site);

  // An activity from CUPTI. API calls get their os_tid here once their thread is known.
  void add_activity(const GpuActivity& activity);

  // Moves to `out` every activity whose range is settled — found, or given up on because its
  // launch is older than the horizon at `now`, or because this is the `final` release — with
  // GpuActivity::range set. Forgets what can no longer be needed.
  void release(std::uint64_t now, bool final, std::vector<GpuActivity>* out);

  std::uint64_t attributed() const { return attributed_; }
  std::uint64_t unattributed() const { return unattributed_; }
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Range {
    std::uint64_t end;
    const CallSite* site;
  };
  struct Launch {
    std::uint64_t start;
    const CallSite* range;
    bool settled;
  };
  struct Pending {
    GpuActivity activity;
    bool settled;
    std::uint32_t releases;  // release() calls seen while unsettled
  };

  // The innermost range on `os_tid` around [start, end], or nullptr if none is known.
  const CallSite* find_range(std::int64_t os_tid, std::uint64_t start, std::uint64_t end) const;
  static void settle(Pending& p, const CallSite* range);
  void forget_before(std::uint64_t cutoff);

  const Options options_;
  // Per thread, closed ranges by begin.
  std::unordered_map<std::int64_t, std::multimap<std::uint64_t, Range>> ranges_;
  std::unordered_map<std::uint32_t, Launch> launches_;          // by correlation id
  std::unordered_map<std::uint32_t, std::int64_t> os_tids_;     // by CUPTI thread id
  std::unordered_map<std::int64_t, std::uint64_t> idle_since_;  // threads with no range open
  std::vector<Pending> pending_;
  std::uint64_t attributed_ = 0;
  std::uint64_t unattributed_ = 0;
};

}  // namespace gpuprobe::gpu
