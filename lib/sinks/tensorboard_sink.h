// `tensorboard=LOGDIR`: what TensorBoard shows without a profile — per step (see
// gpuprobe::step()), scalars of the step's time, each GPU's busy share and kernel count, events
// dropped, and P50/P99/count of every range name, plus a histogram of each name's durations — in
// an event file `LOGDIR/events.out.tfevents.<time>.<host>.<pid>.gpuprobe` (TFRecord framing,
// masked CRC-32C), appended as steps complete so TensorBoard shows a live run. At the end, the
// whole timeline as an XSpace in `LOGDIR/plugins/profile/<run>/<host>.xplane.pb` for XProf's
// trace viewer (TensorBoard's profile tab).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "gpuprobe/sink.hpp"
#include "sinks/step_summaries.h"
#include "sinks/xspace_builder.h"

namespace gpuprobe::sinks {

class TensorBoardSink : public Sink {
 public:
  explicit TensorBoardSink(std::string logdir);
  ~TensorBoardSink() override;

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  const std::string& events_path() const noexcept { return events_path_; }
  const std::string& profile_path() const noexcept { return profile_path_; }

 private:
  struct Value;
  Status write_step(const StepSummary& step, const std::vector<Value>& extra);
  Status write_record(const std::string& data);

  std::string logdir_;
  std::string events_path_;
  std::string profile_path_;
  int fd_ = -1;
  TraceInfo info_;
  StepSummaries summaries_;
  XSpaceBuilder xspace_;
  std::set<std::string> tags_;  // tags already written, which carry no metadata again
  std::int64_t last_step_ = -1;
  std::vector<std::string> scratch_;
};

}  // namespace gpuprobe::sinks
