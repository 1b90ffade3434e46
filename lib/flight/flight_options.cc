#include "flight/flight_options.h"

#include <iterator>
#include <string>
#include <string_view>

#include "base/option_values.h"
#include "core/sink_registry.h"

namespace gpuprobe::flight {
namespace {

using base::bad_value;
using base::parse_int;
using Options = FlightOptions;

Status apply_flight(std::string_view v, Options& c) {
  if (!parse_int<std::uint32_t>(v, 1, 86400, &c.seconds)) {
    return bad_value("flight", v, "a number of seconds from 1 to 86400");
  }
  return {};
}

Status apply_flight_mb(std::string_view v, Options& c) {
  if (!parse_int<std::uint64_t>(v, 1, std::uint64_t{1} << 20, &c.mb)) {
    return bad_value("flight_mb", v, "a number of MiB from 1 to 1048576");
  }
  return {};
}

Status apply_dump(std::string_view v, Options& c) {
  c.dir = std::string(v);
  if (v.empty()) return bad_value("dump", v, "a directory");
  return {};
}

Status apply_dump_format(std::string_view v, Options& c) {
  c.formats.clear();
  for (const std::string_view key : base::plus_items(v)) {
    // "window" is not a sink: the flight recorder's own bytes (window_file.h).
    if (key != "window" && !core::SinkRegistry::get().writes_trace(key)) {
      return Status::Error("config key 'dump_format': " + base::quoted(key) +
                           " is not an output a dump can write (e.g. perfetto+chrome, or "
                           "window)");
    }
    c.formats.emplace_back(key);
  }
  if (c.formats.empty()) return bad_value("dump_format", v, "a list such as perfetto+chrome");
  return {};
}

Status apply_dump_after(std::string_view v, Options& c) {
  if (!base::parse_duration(v, 1'000'000'000, &c.after_ns) || c.after_ns > 600e9) {
    return bad_value("dump_after", v, "a duration up to 10 minutes (2s, 500ms; bare: seconds)");
  }
  return {};
}

Status apply_dump_cooldown(std::string_view v, Options& c) {
  if (!base::parse_duration(v, 1'000'000'000, &c.cooldown_ns) || c.cooldown_ns > 86400e9) {
    return bad_value("dump_cooldown", v, "a duration up to 24 hours (60s, 5m; bare: seconds)");
  }
  return {};
}

Status apply_dump_max_per_hour(std::string_view v, Options& c) {
  if (!parse_int<std::uint32_t>(v, 1, 3600, &c.max_per_hour)) {
    return bad_value("dump_max_per_hour", v, "a number from 1 to 3600");
  }
  return {};
}

Status apply_dump_max_mb(std::string_view v, Options& c) {
  if (!parse_int<std::uint64_t>(v, 1, std::uint64_t{1} << 24, &c.max_mb)) {
    return bad_value("dump_max_mb", v, "a number of MiB from 1 to 16777216");
  }
  return {};
}

Status apply_trigger(std::string_view v, Options& c) { return parse_triggers(v, &c.triggers); }

// The keys of the dumps mean nothing without the recorder.
Status check(Options& c, const base::GivenKeys& given) {
  if (c.seconds != 0) return {};
  for (const char* key : {"dump", "dump_format", "dump_after", "trigger", "dump_cooldown",
                          "dump_max_per_hour", "dump_max_mb", "flight_mb"}) {
    if (given.has(key)) {
      return Status::Error(std::string("config key '") + key +
                           "' needs the flight recorder: add flight=SECONDS (e.g. flight=30)");
    }
  }
  return {};
}

std::string dump_formats(const Options& c) {
  std::string out;
  for (const std::string& f : c.formats) out += (out.empty() ? "" : "+") + f;
  return out;
}

std::string seconds_of(std::int64_t ns) {
  std::string s = std::to_string(ns / 1'000'000'000);
  if (ns % 1'000'000'000 != 0) s = std::to_string(ns / 1'000'000) + "m";
  return s + "s";
}

// The value of a number field, as help() shows a default.
template <auto Field>
std::string number(const Options& c) {
  return std::to_string(c.*Field);
}
std::string none(const Options&) { return {}; }

constexpr base::OptionSpec<Options> kOptions[] = {
    {"flight", "SECONDS", none,
     "flight recorder: keep the last SECONDS of everything recorded (ranges, instants, counters, "
     "GPU activity) in memory, overwriting the oldest (counted), and write it only as a dump: "
     "on a trigger, gpuprobe::dump(), gpuprobe.dump(), or POST /dump on the metrics port",
     apply_flight},
    {"flight_mb", "MIB", number<&Options::mb>,
     "most memory the flight recorder keeps; past it the oldest events go first (counted), "
     "whatever their age",
     apply_flight_mb},
    {"dump", "DIR", [](const Options& c) { return c.dir; },
     "where dumps go, one directory each, named by UTC time, host, pid and rank, written under a "
     "temporary name and renamed when complete",
     apply_dump},
    {"dump_format", "KEY+KEY...", dump_formats,
     "the outputs each dump writes (output keys above, e.g. perfetto+chrome+tensorboard, or "
     "window: the recorder's own bytes, written as fast as they can be copied and read by every "
     "gpuprobe command; gpuprobe convert makes the others of it); every dump also has dump.json, "
     "which describes it",
     apply_dump_format},
    {"dump_after", "DURATION", [](const Options& c) { return seconds_of(c.after_ns); },
     "how long after a trigger a dump keeps recording before it is written; recording never "
     "stops",
     apply_dump_after},
    {"trigger", "SPEC+SPEC...", none,
     "dump by itself when: slow:NAME>200ms (one range NAME longer), p99:NAME>50ms/10s (any "
     "pNN of NAME over a rolling window above; needs 1/(1-q) samples in the window, 100 for "
     "p99), signal[:SIGUSR1|SIGUSR2] (default SIGUSR2), recompile (torch.compile recompiles a "
     "frame, gpuprobe.torch.watch_compile()), recompile>3/60s (more than 3 recompiles within 60 "
     "s)",
     apply_trigger},
    {"dump_cooldown", "DURATION", [](const Options& c) { return seconds_of(c.cooldown_ns); },
     "least time between two dumps that triggers start (requests through the API or HTTP are "
     "not held back by it)",
     apply_dump_cooldown},
    {"dump_max_per_hour", "N", number<&Options::max_per_hour>,
     "most dumps in any hour; triggers past it are counted, not written", apply_dump_max_per_hour},
    {"dump_max_mb", "MIB", number<&Options::max_mb>,
     "most disk all dumps in the dump directory take; the oldest are deleted to make room",
     apply_dump_max_mb},
};

}  // namespace

const base::OptionTable<FlightOptions>& flight_options() {
  static constexpr base::OptionTable<FlightOptions> kTable{kOptions, std::size(kOptions), check};
  return kTable;
}

}  // namespace gpuprobe::flight
