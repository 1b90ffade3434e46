// The collector: a thread that periodically drains every thread's ring, decodes the records into
// Events and hands them to the sinks in batches. Everything that costs (names, formats, I/O,
// clock conversion) happens here, off the recording threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/error_log.h"
#include "core/gpu_source.h"
#include "core/thread_registry.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::core {

// A sink with the label used in its error messages ("chrome=trace.json").
struct SinkSlot {
  std::shared_ptr<Sink> sink;
  std::string label;
  bool failed = false;
};

struct CollectorOptions {
  std::uint32_t epoch = 0;
  std::uint64_t ring_capacity = 0;
  std::chrono::milliseconds period{20};
  GpuSource* gpu = nullptr;  // not owned; outlives the collector
  std::string gpu_status = "off";
  // What the sinks were opened with. A GPU source that learns its devices later (CUPTI started
  // at CUDA's initialization) has them given to the sinks before they close (update_info).
  TraceInfo info;
};

class Collector {
 public:
  // `sinks` are already open. `errors` must outlive the collector.
  Collector(std::vector<SinkSlot> sinks, const Calibration& calibration,
            const CollectorOptions& options, ErrorLog* errors);
  ~Collector();

  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // Starts the periodic drain thread.
  void start();
  // Joins the thread, drains one last time and closes the sinks. Call after the gate is closed
  // and the GPU source disabled.
  void stop();
  // Totals and rows as of the latest drain.
  Stats stats() const;

  // One drain of every ring, handing the events to the sinks: what the thread does each period,
  // and what Session::flush() does on the caller's thread. Serialized: rings have one consumer.
  void drain() { drain(false); }

 private:
  // `final`: also force out GPU records CUPTI still holds in incomplete buffers.
  void drain(bool final);
  void collect_gpu(bool final);
  void run();
  // Wakes the collector thread for a drain now (rings are short: it recycles exited threads').
  static void wake_for_rings(void* self);
  void prepare_row(const ThreadState& ring);
  // The row of `track`, created (as a thread of its own) on first sight.
  std::uint32_t track_row(std::uint32_t track);
  // The row of gpuprobe's own events, created on first use.
  std::uint32_t gpuprobe_row();
  void deliver();
  template <class Call>
  void call_sinks(Call&& call);

  std::vector<SinkSlot> sinks_;
  Calibration calibration_;
  TimeBase time_;
  const CollectorOptions options_;
  ErrorLog* errors_;

  // Held for a whole drain, so that the collector thread and flush() take turns as the rings'
  // single consumer. Everything below up to stats_mu_ belongs to whoever holds it.
  std::mutex drain_mu_;
  // Reused across drains so steady-state draining does not allocate.
  std::vector<ThreadState*> rings_;
  std::vector<Event> batch_;
  std::vector<std::uint32_t> name_versions_;
  std::vector<GpuActivity> gpu_records_;
  std::vector<RecordingSwitch> switches_;
  static constexpr std::uint32_t kNoRow = ~0u;
  std::uint32_t gpuprobe_row_ = kNoRow;
  std::unordered_map<std::uint32_t, std::uint32_t> track_rows_;  // track -> row
  std::vector<std::uint64_t> track_written_;   // per row, events of tracks in the current drain
  std::vector<std::uint32_t> tracks_touched_;  // rows with a count in track_written_
  // The GPU source, when it attributes GPU work to ranges: it sees threads and ranges.
  GpuSource* const range_observer_;

  // Rows are written only by the collector (under stats_mu_) and read by sinks on the collector
  // thread without the lock, and by stats() from any thread with it.
  mutable std::mutex stats_mu_;
  std::vector<ThreadInfo> rows_;
  GpuStats gpu_stats_;

  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool drain_requested_ = false;
  std::thread thread_;
};

}  // namespace gpuprobe::core
