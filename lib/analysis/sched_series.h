// One thread's scheduler counters as sched= sampled them (formats/sched_counters.h): its total
// time on a CPU and its total run-queue delay (runnable, waiting for a CPU), each a series of
// (time, total) samples, read back at any time by linear interpolation between samples.
//
// The kernel adds a thread's run-queue delay to its total only when the thread gets a CPU back,
// so a thread that waited for a CPU for 20 ms shows its counters unchanged for 20 ms (as a
// blocked thread would) and then a jump; and a wait still going on at a sample shows up only at
// a later one. finish() places each jump back where it happened: a period's delay fills that
// period's room (its length less what the thread ran in it), then the room left in the periods
// before it, latest first: the wait ended when the thread got its CPU back and is one stretch
// back from there, through periods in which nothing moved and into the tail of the first one in
// which the thread ran — not past it — at most kMaxReach periods. What does not fit (samples
// that disagree) is left where it was seen. Within a period the totals are interpolated linearly, so a split read from
// the series is exact to about one period at each end of the span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

class SchedSeries {
 public:
  static constexpr std::size_t kMaxReach = 1024;  // periods a wait is placed back over, at most

  // A sample of the thread's total on a CPU, or of its total run-queue delay, in nanoseconds.
  void add_running(std::int64_t at_ns, double total_ns) { running_.push_back({at_ns, total_ns}); }
  void add_waiting(std::int64_t at_ns, double total_ns) { waiting_.push_back({at_ns, total_ns}); }
  // Sorts the samples and places the run-queue delays back (above); before any reads.
  void finish();

  bool empty() const { return running_.empty() || waiting_.empty(); }
  // The first sample's time (either series); valid when !empty().
  std::int64_t first_ns() const;
  // The last sample's time (either series); valid when !empty().
  std::int64_t last_ns() const;
  // Time on a CPU, and time waiting for one, in [begin, end) (ns, may be fractional).
  double running(std::int64_t begin, std::int64_t end) const {
    return at(running_, end) - at(running_, begin);
  }
  double waiting(std::int64_t begin, std::int64_t end) const {
    return at(waiting_, end) - at(waiting_, begin);
  }

 private:
  struct Sample {
    std::int64_t at_ns;
    double total_ns;
  };
  // A series' total at `t`, interpolated; the first and last samples hold beyond the ends.
  static double at(const std::vector<Sample>& s, std::int64_t t);
  // The samples' waiting totals, moved to where the waits happened (above).
  void place_waits_back();

  std::vector<Sample> running_, waiting_;
};

}  // namespace gpuprobe::analysis
