// The flight recorder (`flight=SECONDS`): a Sink that keeps the last seconds of everything the
// collector hands it in an EventStore and writes nothing until a dump is asked for, by a trigger
// (`trigger=`), a signal, gpuprobe::dump() or POST /dump on the metrics port. A dump covers the
// window before the moment it was asked for and `dump_after` after it; a thread of its own waits
// for that time to pass and writes it (dump_writer.h), so neither the collector nor the program
// ever waits for a dump. Rate limits: a cooldown between triggered dumps, a maximum per hour,
// and a disk cap on the dump directory.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "flight/dump_writer.h"
#include "flight/event_store.h"
#include "flight/flight_options.h"
#include "flight/triggers.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::flight {

// What the recorder did, for the metrics and for tests.
struct FlightCounters {
  std::uint64_t dumps_written = 0;
  std::uint64_t dumps_failed = 0;
  std::uint64_t dumps_deleted = 0;  // by the disk cap
  std::uint64_t triggers_fired = 0;
  std::uint64_t suppressed_cooldown = 0;
  std::uint64_t suppressed_hourly = 0;
  std::uint64_t suppressed_pending = 0;  // fired while a triggered dump was still recording
  StoreCounters store;
};

class FlightRecorder final : public Sink {
 public:
  FlightRecorder(FlightOptions options, core::ClockSource clock, const TimeBase& time);
  ~FlightRecorder() override;

  // Where the drops a dump reports come from while the session runs (the collector's stats()).
  void set_stats_source(std::function<Stats()> source);
  // Called with the last tick of each dump's window as the dump is queued, from the thread that
  // asked for it; it must not block. The session makes GPU bursts (gpu_burst=) cover it.
  void set_window_hook(std::function<void(std::uint64_t to_tick)> hook);

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // From any thread: asks for a dump now (`source` "api" or "http"). Returns at once; `path`
  // gets the directory the dump will have. Rate-limited by the hourly maximum, not the cooldown
  // (the triggers, the signal's among them, are held by both).
  Status request(std::string_view source, std::string_view reason, std::string* path);

  FlightCounters counters() const;

 private:
  // Queues a dump of the window around `job.at_tick`; false with `why` when a limit holds it.
  bool enqueue(DumpJob job, bool triggered, std::string* why, std::string* path);
  // Says that a trigger was refused, at most once a minute (under jobs_mu_).
  void say_refused(std::int64_t now, const DumpJob& job, const std::string& why);
  void run();
  void write_job(DumpJob job);

  const FlightOptions options_;
  const core::ClockSource clock_;
  RangeTriggers range_triggers_;
  int signal_ = 0;  // the signal trigger's, or 0
  TraceInfo info_;
  std::function<Stats()> stats_source_;
  std::function<void(std::uint64_t)> window_hook_;  // under jobs_mu_

  mutable std::mutex store_mu_;  // store_, time_ and final_stats_: the collector writes, dumps read
  EventStore store_;
  TimeBase time_;
  Stats final_stats_;
  // GPU recording's switches (gpu_burst=), from the last one before the kept window on.
  std::vector<core::RecordingSwitch> gpu_switches_;
  std::uint32_t gpu_switch_row_ = 0;
  bool closed_ = false;

  mutable std::mutex jobs_mu_;  // everything below
  std::condition_variable jobs_cv_;
  std::deque<DumpJob> jobs_;
  std::deque<std::int64_t> dumps_this_hour_;  // when each was asked for, ns
  std::int64_t last_triggered_ns_ = 0;
  std::int64_t refused_said_ns_ = 0;  // when a refused trigger was last said
  std::uint64_t refused_unsaid_ = 0;  // refused since then
  bool stopping_ = false;
  FlightCounters counters_;
  std::vector<Firing> fired_;  // reused by write()
  std::thread thread_;
};

}  // namespace gpuprobe::flight
