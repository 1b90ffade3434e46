// What a thread was doing during a span — running on a CPU, waiting for one (runnable but
// preempted: run-queue delay) or blocked (a lock, I/O, sleep) — from the scheduler counters
// sched= records (formats/sched_counters.h, read back by analysis/sched_series.h), and, when it
// was blocked, what it waited behind: the range on another thread that held it up, and the
// thread that was on a CPU the most meanwhile (in Python, the GIL's holder). The jitter analysis
// asks it about each outlier, so that a request that waited is not called a CPU gap.
//
// The holder is chosen among the other threads' ranges that overlap the span, leaving out
// fellow waiters: threads in a range named as one of the span's thread's own (waiting at the
// same place) and themselves neither on a CPU nor waiting for one for most of it. Of the rest,
// the shortest range that covers nine tenths of the blocked time (the innermost: the lock's
// scope rather than the loop around it), else the one that overlaps most. When only fellow
// waiters overlap, the one whose range began first (the first to arrive got what the others
// wait for) is the holder. The fellow waiters are counted: "waiting behind N other waiters".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/sched_series.h"

namespace gpuprobe::analysis {

struct CpuSplit {
  bool known = false;  // the thread has scheduler samples around the span
  std::int64_t running_ns = 0, waiting_ns = 0, blocked_ns = 0;
  // When blocked: the other thread's range it waited behind, its thread, how long they
  // overlapped and how much of that the holder's thread was on a CPU (-1: not sampled); and the
  // number of other threads waiting at the same place.
  std::string holder_range, holder_thread;
  std::int64_t holder_overlap_ns = 0;
  std::int64_t holder_running_ns = -1;
  std::int64_t holder_waiting_ns = -1;  // and waiting for a CPU (-1: not sampled)
  int other_waiters = 0;
  // The other thread that ran the most meanwhile, and how long.
  std::string busiest_thread;
  std::int64_t busiest_running_ns = 0;
};

class CpuState : public Analysis {
 public:
  static constexpr std::size_t kMaxRanges = 1'000'000;  // kept for the holder search
  static constexpr std::int64_t kMinRangeNs = 100'000;  // shorter ranges hold no lock worth naming

  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;

  // The split of [begin, end) on the thread with OS id `tid`; valid after finish(). Unknown
  // past the last sampling.
  CpuSplit split(std::int64_t tid, std::int64_t begin, std::int64_t end) const;
  bool sampled() const { return !series_.empty(); }

 private:
  struct KeptRange {
    std::int64_t begin, end;
    std::uint32_t thread;
    const char* name;
  };
  // The holder and fellow waiters of `out`'s blocked time (above).
  void find_holder(std::int64_t tid, std::int64_t begin, std::int64_t end, CpuSplit* out) const;
  // Time on a CPU, and waiting for one, of the thread with OS id `tid` in [begin, end); -1 when
  // it was not sampled.
  struct Activity {
    std::int64_t running = -1, waiting = -1;
  };
  Activity activity(std::int64_t tid, std::int64_t begin, std::int64_t end) const;

  std::map<std::int64_t, SchedSeries> series_;  // by OS thread id
  std::int64_t last_sample_ns_ = 0;             // of any thread: past it, nothing is known
  std::vector<KeptRange> ranges_;
  std::uint64_t ranges_left_out_ = 0;
  std::int64_t longest_ = 0;  // of ranges_
  const TraceContext* trace_ = nullptr;
};

}  // namespace gpuprobe::analysis
