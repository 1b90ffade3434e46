// Writes one dump: the events of its window from a snapshot of the flight recorder, through the
// outputs the config names (each a registered sink, so a dump is read like any gpuprobe trace),
// and dump.json, which says what the dump is. Everything goes into a hidden directory that is
// renamed to the dump's name once complete: a reader never sees half a dump.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/gpu_source.h"
#include "flight/event_store.h"
#include "flight/flight_options.h"
#include "gpuprobe/status.hpp"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::flight {

// The dump format that is not a sink: the recorder's chunks as they are (flight/window_file.h).
inline constexpr char kWindowFormat[] = "window";

// One dump asked for: by a trigger, the API, HTTP or a signal.
struct DumpJob {
  std::string name;     // the directory's name (dump_name())
  std::string source;   // "trigger", "api", "http" or "signal"
  std::string reason;   // one sentence
  std::string trigger;  // the trigger as configured, for source "trigger" and "signal"
  std::vector<std::pair<std::string, double>> values;  // what fired it
  std::uint64_t at_tick = 0;
  std::uint32_t thread = 0;  // the marker's thread
  std::uint64_t from_tick = 0;
  std::uint64_t to_tick = 0;
  bool after_cut_short = false;  // the session stopped before the time after the trigger passed
};

// What the writer needs besides the job: all of it copied, the writer runs on its own thread.
struct DumpContext {
  TraceInfo info;
  TimeBase time;
  Stats session;  // the session's statistics when the dump was taken: its drops
  StoreCounters store;
  const FlightOptions* options = nullptr;
  // With GPU bursts: the switches of GPU recording the recorder saw, oldest first, from the last
  // one before the window on; and the row their counter is on.
  std::vector<core::RecordingSwitch> gpu_switches;
  std::uint32_t gpu_switch_row = 0;
};

// Writes `job` into options->dir; `path` gets the dump's directory.
Status write_dump(const DumpJob& job, const StoreSnapshot& snapshot, const DumpContext& context,
                  std::string* path);

}  // namespace gpuprobe::flight
