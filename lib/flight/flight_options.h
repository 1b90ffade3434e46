// The flight recorder's options and its dumps': off unless `flight=` is given. Declared here,
// beside the recorder that reads them (flight_recorder.h); the session layer puts the table
// together with the other layers'.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/option_table.h"
#include "flight/trigger_spec.h"

namespace gpuprobe::flight {

// What `flight=`, `flight_mb=`, `dump=`, `dump_format=`, `dump_after=`, `trigger=`,
// `dump_cooldown=`, `dump_max_per_hour=` and `dump_max_mb=` choose; every default is written
// here once.
struct FlightOptions {
  std::uint32_t seconds = 0;  // the window kept; 0: no flight recorder
  std::uint64_t mb = 64;      // most memory the kept window takes
  std::string dir = "gpuprobe_dumps";
  std::vector<std::string> formats = {"perfetto", "chrome"};  // sink keys each dump writes
  std::int64_t after_ns = 2'000'000'000;                      // recorded after a trigger
  std::int64_t cooldown_ns = 60'000'000'000;                  // between dumps that triggers start
  std::uint32_t max_per_hour = 12;
  std::uint64_t max_mb = 1024;  // the dump directory's dumps together; the oldest go first
  std::vector<TriggerSpec> triggers;
};

// flight= ... dump_max_mb=, with their check (the dump keys need flight=). dump_format= takes
// the registered outputs that write a trace (core::SinkRegistry), and window.
const base::OptionTable<FlightOptions>& flight_options();

}  // namespace gpuprobe::flight
