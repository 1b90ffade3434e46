// The wall-clock span of steps first..last (ProfilerStep#N) in a trace: a Sink for a first pass
// of `gpuprobe report --steps`, whose second pass reports only that window.
#pragma once

#include <climits>
#include <cstdint>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::analysis {

class StepWindow : public Sink {
 public:
  StepWindow(std::int64_t first, std::int64_t last) : first_(first), last_(last) {}
  Status open(const TraceInfo&) override { return {}; }
  Status write(const EventBatch& batch) override;
  Status close(const Stats&, const TimeBase&) override { return {}; }
  bool found() const { return begin_ns <= end_ns; }
  std::int64_t begin_ns = INT64_MAX, end_ns = INT64_MIN;

 private:
  std::int64_t first_, last_;
};

}  // namespace gpuprobe::analysis
