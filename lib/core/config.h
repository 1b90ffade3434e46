// The config string: `key=value` pairs separated by commas, `+` joining values inside one key.
// Every option is declared once, in config.cc's table, which drives both parsing and help().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/trigger_spec.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::core {

enum class ClockChoice : std::uint8_t { kAuto, kTsc, kMonotonic };

// An output named in the config: `key` is a registered sink, `value` its argument.
struct SinkSpec {
  std::string key;
  std::string value;
};

// The flight recorder and its dumps (lib/flight/): off unless `flight=` is given.
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

struct Config {
  std::vector<SinkSpec> sinks;
  std::uint64_t ring_capacity = 32768;
  std::uint64_t rings_mb = 1024;
  std::uint32_t flush_ms = 20;
  bool nvtx = true;
  ClockChoice clock = ClockChoice::kAuto;
  std::optional<std::uint32_t> categories;  // unset: keep the process-wide switches
  int rank = -1;
  int world_size = -1;
  std::uint32_t max_names = 65536;
  std::uint32_t gpu_kinds = 0;    // gpu_kind_bit()s; 0: no GPU activity
  bool gpu_all_api = false;       // every API call, not only those api_selection.h keeps
  bool gpu_api_callbacks = true;  // the kept calls from CUPTI callbacks, not API activity records
  std::size_t gpu_buffers = 8;
  std::size_t gpu_buffer_kb = 4096;
  std::size_t gpu_max_mb = 256;
  std::uint32_t attribution_ms = 5000;
  // gpu_burst=ON/EVERY: GPU activity for ON in every EVERY; 0: all the time.
  std::int64_t gpu_burst_on_ns = 0;
  std::int64_t gpu_burst_every_ns = 0;
  // sched=PERIOD: every thread's scheduler statistics sampled this often; 0: not at all.
  std::int64_t sched_period_ns = 0;
  FlightOptions flight;
  std::uint32_t metrics_names = 64;         // range names with a histogram in the metrics
  std::vector<std::string> metrics_ranges;  // only these names, when given
};

// Parses `text` into `config` (fields not named keep their defaults). On error, `config` is
// unspecified and the message names the offending key and value.
Status parse_config(std::string_view text, Config* config);

// True if `key` is one of the options (not a sink).
bool is_option_key(std::string_view key);

// The options and the registered sinks, one per line, for --help.
std::string config_help();

}  // namespace gpuprobe::core
