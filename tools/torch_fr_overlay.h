// A Sink in front of another that adds one rank's PyTorch flight recorder entries to the trace
// it writes (`gpuprobe report --torch-flight-recorder DIR --merge OUT`): on a thread per process
// group, "PyTorch flight recorder: process group 0 (default_pg)", each collective or send/receive
// as an instant when the rank issued it, those neither completed nor retired as a range from then
// to the trace's end (still waiting when the recorder dumped), and the first mismatch of the ranks
// as an instant. The recorder's completion times are when its watchdog noticed them, not when they
// ended, so completed operations are not drawn as ranges. Entries outside the trace's span are
// left out (counted).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "analysis/collective_match.h"
#include "formats/torch_flight_recorder.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::tools {

class TorchFrOverlay : public Sink {
 public:
  // `out`, `dumps` and `match` must outlive the overlay; the trace's rank picks the dump.
  TorchFrOverlay(Sink& out, const std::vector<formats::torch_fr::Dump>& dumps,
                 const analysis::CollectiveMatch& match)
      : out_(out), dumps_(dumps), match_(match) {}

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  void update_info(const TraceInfo& info) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // The trace's rank had a dump; the entries and marks added; entries outside the trace's span.
  bool found() const { return dump_ != nullptr; }
  std::int64_t added() const { return added_; }
  std::int64_t outside() const { return outside_; }

 private:
  void find_dump(int rank);
  const CallSite* site(std::string name);

  Sink& out_;
  const std::vector<formats::torch_fr::Dump>& dumps_;
  const formats::torch_fr::Dump* dump_ = nullptr;
  const analysis::CollectiveMatch& match_;
  bool any_ = false;
  std::uint64_t first_tick_ = UINT64_MAX, last_tick_ = 0;  // the span of the trace's events
  std::deque<std::string> names_;                          // what the sites below point to
  std::deque<CallSite> sites_;
  std::int64_t added_ = 0, outside_ = 0;
};

}  // namespace gpuprobe::tools
