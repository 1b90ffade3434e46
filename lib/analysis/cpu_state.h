// What a thread was doing during a span — running on a CPU, waiting for one (runnable but
// preempted: run-queue delay) or blocked (a lock, I/O, sleep) — from the scheduler counters
// sched= records (formats/sched_counters.h), and, when it was blocked, what ran meanwhile: the
// range on another thread that overlapped it most (a lock's holder, say), and the thread that
// was on a CPU the most (in Python, the GIL's holder). The jitter analysis asks it about each
// outlier, so that a request that waited is not called a CPU gap.
//
// The counters are each thread's totals, sampled every period; between two samples they are
// interpolated linearly, so a split is exact to about two periods.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/intervals.h"

namespace gpuprobe::analysis {

struct CpuSplit {
  bool known = false;  // the thread has scheduler samples around the span
  std::int64_t running_ns = 0, waiting_ns = 0, blocked_ns = 0;
  // When blocked: the other thread's range that overlapped the span most, its thread, and how
  // long they overlapped; and the other thread that ran the most meanwhile, how long.
  std::string holder_range, holder_thread;
  std::int64_t holder_overlap_ns = 0;
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

  // The split of [begin, end) on the thread with OS id `tid`; valid after finish().
  CpuSplit split(std::int64_t tid, std::int64_t begin, std::int64_t end) const;
  bool sampled() const { return !series_.empty(); }

 private:
  struct Sample {
    std::int64_t at_ns;
    double total_ns;
  };
  // A counter's total at `t`, interpolated; the first and last samples hold beyond the ends.
  static double at(const std::vector<Sample>& s, std::int64_t t);
  struct Series {
    std::vector<Sample> running, waiting;
  };
  struct KeptRange {
    std::int64_t begin, end;
    std::uint32_t thread;
    const char* name;
  };
  std::map<std::int64_t, Series> series_;  // by OS thread id
  std::vector<KeptRange> ranges_;
  std::uint64_t ranges_left_out_ = 0;
  std::int64_t longest_ = 0;  // of ranges_
  const TraceContext* trace_ = nullptr;
};

}  // namespace gpuprobe::analysis
