// A flight recorder dump (one directory of dump=DIR, described by its dump.json) as
// `gpuprobe report` reads it: which trace in it to read, what the trigger watched — so that the
// outliers explained are the ones that fired it — and the lines that say so first.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/trace_report.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::tools {

struct FlightDump {
  std::string trace;  // the dump's trace file to read (Perfetto where written, else Chrome)
  std::string name, source, reason, trigger;  // as dump.json says
  std::string latency_name;                   // the range the trigger watched, or ""
  double threshold_ms = 0;                    // its threshold, or 0
  std::int64_t trigger_ns = 0;                // wall-clock ns
  std::int64_t watched_from_ns = 0;           // the span whose instances fired it
  std::int64_t window_from_ns = 0, window_to_ns = 0;
  double before_s = 0, after_s = 0;
  std::string host, process_name;
  long long pid = -1, rank = -1, events = 0, gpu_events = 0, dropped = 0, overwritten = 0;
  bool gpu_sampled = false;
  double gpu_recorded_s = 0;
};

// True when `dir` is a dump (it holds a dump.json).
bool is_flight_dump(const std::string& dir);

// Reads `dir`'s dump.json; an error names what is missing or malformed.
[[nodiscard]] Status read_flight_dump(const std::string& dir, FlightDump* out);

// The trigger's range, threshold and watched span as report options, unless the user gave
// their own (--latency, --threshold-ms).
void apply_trigger(const FlightDump& dump, analysis::ReportOptions* options);

// The report's first lines: which trigger fired, why, and what the window holds.
void print_dump_header(const FlightDump& dump, std::FILE* out);

// The same facts as a JSON object (the report's "dump" member).
nlohmann::json dump_json(const FlightDump& dump);

}  // namespace gpuprobe::tools
