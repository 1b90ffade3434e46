// A session's config string: `key=value` pairs separated by commas, `+` joining values inside
// one key. Its options are the components' own tables (base/option_table.h), each declared beside
// its code — core's recording options, the GPU sources', sched's, the metrics', the flight
// recorder's — and put together here, the one place that knows them all; every other key is an
// output (core::SinkRegistry). Parsing, help() and the README's table come from this one list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/recording_options.h"
#include "flight/flight_options.h"
#include "gpu/gpu_options.h"
#include "gpuprobe/status.hpp"
#include "metrics/metrics_options.h"
#include "session/control_options.h"
#include "session/sched_options.h"

namespace gpuprobe::session {

// An output named in the config: `key` is a registered sink, `value` its argument.
struct SinkSpec {
  std::string key;
  std::string value;
};

// A parsed config: the outputs it names and each component's options.
struct SessionConfig {
  std::vector<SinkSpec> sinks;
  core::RecordingOptions recording;
  gpu::GpuOptions gpu;
  SchedOptions sched;
  metrics::RangeSelection metrics;
  flight::FlightOptions flight;
  ControlOptions control;
};

// Parses `text` into `config` (fields not named keep their defaults). On error, `config` is
// unspecified and the message names the offending key and value. The outputs' keys are those
// registered when it runs (register_builtin_sinks() first).
Status parse_config(std::string_view text, SessionConfig* config);

// True if `key` is one of the options (not an output).
bool is_option_key(std::string_view key);

// The outputs and the options, one per line, for Session::help().
std::string config_help();

}  // namespace gpuprobe::session
