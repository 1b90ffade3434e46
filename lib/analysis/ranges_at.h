// What a trace's threads were doing at one moment: per thread, the innermost range open at a
// wall-clock time, the first range to begin after it, and the trace's span — to place an event
// known only by its time (a collective a rank issued, from PyTorch's flight recorder) on gpuprobe's
// timeline.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::analysis {

class RangesAt : public Sink {
 public:
  explicit RangesAt(std::int64_t at_ns) : at_ns_(at_ns) {}
  Status open(const TraceInfo& info) override;
  // A Perfetto trace states its rank at its end.
  void update_info(const TraceInfo& info) override {
    if (rank_ < 0) rank_ = info.rank;
  }
  Status write(const EventBatch& batch) override;
  Status close(const Stats&, const TimeBase&) override;

  struct Open {
    std::string thread, name;  // the innermost range open at the time, on that thread
    std::int64_t begin_ns = 0, end_ns = 0;
  };
  const std::vector<Open>& open_ranges() const { return open_; }
  // The first range to begin after the time, on any thread; empty name when none did.
  const Open& next_range() const { return next_; }
  int rank() const { return rank_; }
  // The span of the trace's CPU events, wall-clock ns; first > last when it has none.
  std::int64_t first_ns() const { return first_ns_; }
  std::int64_t last_ns() const { return last_ns_; }

 private:
  std::int64_t at_ns_;
  int rank_ = -1;
  Open next_;
  std::vector<Open> open_;  // by thread index while reading (empty name: none open); then compacted
  std::int64_t first_ns_ = INT64_MAX, last_ns_ = INT64_MIN;
};

}  // namespace gpuprobe::analysis
