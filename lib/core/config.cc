#include "core/config.h"

#include <algorithm>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <utility>

#include "core/categories.h"
#include "core/clock.h"
#include "core/gpu_source.h"
#include "core/sink_registry.h"
#include "gpuprobe/detail/fixed_ring.hpp"

namespace gpuprobe::core {
namespace {

// Input echoed in a message: at most 80 bytes of it, so that a megabyte of config is one line.
std::string quoted(std::string_view s) {
  constexpr std::size_t kEcho = 80;
  if (s.size() <= kEcho) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, kEcho)) + "...' (" + std::to_string(s.size()) + " bytes)";
}

Status bad_value(std::string_view key, std::string_view value, std::string_view expected) {
  return Status::Error("config key " + quoted(key) + ": " + quoted(value) + " is not " +
                       std::string(expected));
}

template <class Int>
bool parse_int(std::string_view s, Int min, Int max, Int* out) {
  Int v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

bool parse_switch(std::string_view s, bool* out) {
  if (s == "on" || s == "1" || s == "true" || s == "yes") return *out = true, true;
  if (s == "off" || s == "0" || s == "false" || s == "no") return *out = false, true;
  return false;
}

std::uint64_t round_up_pow2(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

Status apply_ring(std::string_view v, Config& c) {
  std::uint64_t n = 0;
  if (!parse_int<std::uint64_t>(v, 16, std::uint64_t{1} << 26, &n)) {
    return bad_value("ring", v, "a record count from 16 to 67108864");
  }
  c.ring_capacity = round_up_pow2(n);
  return {};
}

Status apply_rings_mb(std::string_view v, Config& c) {
  if (!parse_int<std::uint64_t>(v, 1, std::uint64_t{1} << 20, &c.rings_mb)) {
    return bad_value("rings_mb", v, "a number of MiB from 1 to 1048576");
  }
  return {};
}

Status apply_flush_ms(std::string_view v, Config& c) {
  if (!parse_int<std::uint32_t>(v, 1, 10000, &c.flush_ms)) {
    return bad_value("flush_ms", v, "a number of milliseconds from 1 to 10000");
  }
  return {};
}

Status apply_nvtx(std::string_view v, Config& c) {
  if (!parse_switch(v, &c.nvtx)) return bad_value("nvtx", v, "on or off");
  return {};
}

Status apply_clock(std::string_view v, Config& c) {
  if (v == "auto") {
    c.clock = ClockChoice::kAuto;
  } else if (v == "tsc") {
    if (!tsc_is_invariant())
      return Status::Error("config key 'clock': this CPU has no invariant TSC");
    c.clock = ClockChoice::kTsc;
  } else if (v == "monotonic") {
    c.clock = ClockChoice::kMonotonic;
  } else {
    return bad_value("clock", v, "auto, tsc or monotonic");
  }
  return {};
}

// The items of a "+"-joined value, empty ones included (each caller says what they mean).
std::vector<std::string_view> plus_items(std::string_view v) {
  std::vector<std::string_view> items;
  while (!v.empty()) {
    const std::size_t plus = v.find('+');
    items.push_back(v.substr(0, plus));
    v = plus == std::string_view::npos ? std::string_view() : v.substr(plus + 1);
  }
  return items;
}

// Parses "NAME+NAME+..." into a bit mask, `bit_of` giving each name's bit (or nullopt).
template <class BitOf>
Status parse_name_list(std::string_view key, std::string_view v, std::string_view known,
                       BitOf bit_of, std::uint32_t* mask) {
  *mask = 0;
  if (v.empty()) {
    return Status::Error("config key " + quoted(key) +
                         " needs at least one name (known: " + std::string(known) + ")");
  }
  for (const std::string_view name : plus_items(v)) {
    const std::optional<std::uint32_t> bit = bit_of(name);
    if (!bit) {
      return Status::Error("config key " + quoted(key) + ": unknown name " + quoted(name) +
                           " (known: " + std::string(known) + ")");
    }
    *mask |= *bit;
  }
  return {};
}

Status apply_categories(std::string_view v, Config& c) {
  std::uint32_t mask = kAllCategories;
  if (v != "all") {
    const auto bit_of = [](std::string_view name) -> std::optional<std::uint32_t> {
      const std::optional<Category> category = category_by_name(name);
      if (!category) return std::nullopt;
      return 1u << static_cast<unsigned>(*category);
    };
    Status s =
        parse_name_list("categories", v,
                        "app, step, python, torch, compile, gc, alloc, cuda, user0..user7 or "
                        "names given with name_category",
                        bit_of, &mask);
    if (!s.ok()) return s;
  }
  c.categories = mask;
  return {};
}

Status apply_rank(std::string_view v, Config& c) {
  if (!parse_int(v, 0, 1 << 24, &c.rank)) return bad_value("rank", v, "a rank from 0");
  return {};
}

Status apply_world_size(std::string_view v, Config& c) {
  if (!parse_int(v, 1, 1 << 24, &c.world_size)) return bad_value("world_size", v, "a count from 1");
  return {};
}

Status apply_names(std::string_view v, Config& c) {
  if (!parse_int<std::uint32_t>(v, 1, 1u << 24, &c.max_names)) {
    return bad_value("names", v, "a count from 1 to 16777216");
  }
  return {};
}

// `cupti=...+all_api` is not an activity kind: runtime and driver calls, every one of them (by
// default only those gpu/cupti/api_selection.h keeps). A bit past every kind's while parsing.
constexpr std::uint32_t kAllApi = 1u << 31;

Status apply_cupti(std::string_view v, Config& c) {
  const auto bit_of = [](std::string_view name) -> std::optional<std::uint32_t> {
    static constexpr std::pair<std::string_view, GpuActivityKind> kNames[] = {
        {"kernel", GpuActivityKind::kKernel},    {"memcpy", GpuActivityKind::kMemcpy},
        {"memset", GpuActivityKind::kMemset},    {"runtime", GpuActivityKind::kRuntimeApi},
        {"driver", GpuActivityKind::kDriverApi}, {"sync", GpuActivityKind::kSync},
        {"overhead", GpuActivityKind::kOverhead}};
    if (name == "all") return kAllGpuKinds;
    if (name == "all_api") return kAllApi;
    for (const auto& [known, kind] : kNames) {
      if (known == name) return gpu_kind_bit(kind);
    }
    return std::nullopt;
  };
  std::uint32_t bits = 0;
  if (Status s = parse_name_list("cupti", v,
                                 "kernel, memcpy, memset, runtime, driver, sync, overhead, all, "
                                 "all_api",
                                 bit_of, &bits);
      !s.ok()) {
    return s;
  }
  c.gpu_all_api = (bits & kAllApi) != 0;
  c.gpu_kinds = bits & ~kAllApi;
  if (c.gpu_all_api) {
    c.gpu_kinds |=
        gpu_kind_bit(GpuActivityKind::kRuntimeApi) | gpu_kind_bit(GpuActivityKind::kDriverApi);
  }
  return {};
}

Status apply_cupti_api(std::string_view v, Config& c) {
  if (v == "callbacks") {
    c.gpu_api_callbacks = true;
  } else if (v == "activity") {
    c.gpu_api_callbacks = false;
  } else {
    return bad_value("cupti_api", v, "callbacks or activity");
  }
  return {};
}

Status apply_cupti_buffers(std::string_view v, Config& c) {
  if (!parse_int<std::size_t>(v, 2, 1024, &c.gpu_buffers)) {
    return bad_value("cupti_buffers", v, "a buffer count from 2 to 1024");
  }
  return {};
}

Status apply_cupti_buffer_kb(std::string_view v, Config& c) {
  if (!parse_int<std::size_t>(v, 64, 256 * 1024, &c.gpu_buffer_kb)) {
    return bad_value("cupti_buffer_kb", v, "a size in KiB from 64 to 262144");
  }
  return {};
}

Status apply_cupti_mb(std::string_view v, Config& c) {
  if (!parse_int<std::size_t>(v, 1, 64 * 1024, &c.gpu_max_mb)) {
    return bad_value("cupti_mb", v, "a size in MiB from 1 to 65536");
  }
  return {};
}

Status apply_attribution_ms(std::string_view v, Config& c) {
  if (!parse_int<std::uint32_t>(v, 0, 600000, &c.attribution_ms)) {
    return bad_value("attribution_ms", v, "a number of milliseconds from 0 to 600000");
  }
  return {};
}

Status apply_metrics_names(std::string_view v, Config& c) {
  if (!parse_int<std::uint32_t>(v, 1, 4096, &c.metrics_names)) {
    return bad_value("metrics_names", v, "a number of names from 1 to 4096");
  }
  return {};
}

Status apply_metrics_ranges(std::string_view v, Config& c) {
  c.metrics_ranges.clear();
  for (const std::string_view name : plus_items(v)) {
    if (!name.empty()) c.metrics_ranges.emplace_back(name);
  }
  if (c.metrics_ranges.empty()) return bad_value("metrics_ranges", v, "a list of range names");
  return {};
}

Status apply_flight(std::string_view v, Config& c) {
  if (!parse_int<std::uint32_t>(v, 1, 86400, &c.flight.seconds)) {
    return bad_value("flight", v, "a number of seconds from 1 to 86400");
  }
  return {};
}

Status apply_flight_mb(std::string_view v, Config& c) {
  if (!parse_int<std::uint64_t>(v, 1, std::uint64_t{1} << 20, &c.flight.mb)) {
    return bad_value("flight_mb", v, "a number of MiB from 1 to 1048576");
  }
  return {};
}

Status apply_dump(std::string_view v, Config& c) {
  c.flight.dir = std::string(v);
  if (v.empty()) return bad_value("dump", v, "a directory");
  return {};
}

Status apply_dump_format(std::string_view v, Config& c) {
  c.flight.formats.clear();
  for (const std::string_view key : plus_items(v)) {
    // "window" is not a sink: the flight recorder's own bytes (flight/window_file.h).
    if (key != "window" &&
        (!SinkRegistry::get().contains(key) || key == "metrics" || key == "metrics_file")) {
      return Status::Error("config key 'dump_format': " + quoted(key) +
                           " is not an output a dump can write (e.g. perfetto+chrome, or "
                           "window)");
    }
    c.flight.formats.emplace_back(key);
  }
  if (c.flight.formats.empty())
    return bad_value("dump_format", v, "a list such as perfetto+chrome");
  return {};
}

Status apply_sched(std::string_view v, Config& c) {
  std::int64_t period = 0;
  if (v == "off" || v == "0") {
    c.sched_period_ns = 0;
    return {};
  }
  if (!parse_duration(v, 1'000'000, &period) || period < 1'000'000 || period > 1'000'000'000)
    return bad_value("sched", v, "a period from 1ms to 1s (e.g. 2ms), or off");
  c.sched_period_ns = period;
  return {};
}

Status apply_gpu_burst(std::string_view v, Config& c) {
  const std::size_t slash = v.find('/');
  std::int64_t on = 0, every = 0;
  if (slash == std::string_view::npos || !parse_duration(v.substr(0, slash), 1'000'000'000, &on) ||
      !parse_duration(v.substr(slash + 1), 1'000'000'000, &every) || on < 10'000'000 ||
      every <= on || every > 86400e9) {
    return bad_value("gpu_burst", v,
                     "ON/EVERY, two durations with ON from 10ms and less than EVERY (e.g. 1s/60s)");
  }
  c.gpu_burst_on_ns = on;
  c.gpu_burst_every_ns = every;
  return {};
}

Status apply_dump_after(std::string_view v, Config& c) {
  if (!parse_duration(v, 1'000'000'000, &c.flight.after_ns) || c.flight.after_ns > 600e9) {
    return bad_value("dump_after", v, "a duration up to 10 minutes (2s, 500ms; bare: seconds)");
  }
  return {};
}

Status apply_dump_cooldown(std::string_view v, Config& c) {
  if (!parse_duration(v, 1'000'000'000, &c.flight.cooldown_ns) || c.flight.cooldown_ns > 86400e9) {
    return bad_value("dump_cooldown", v, "a duration up to 24 hours (60s, 5m; bare: seconds)");
  }
  return {};
}

Status apply_dump_max_per_hour(std::string_view v, Config& c) {
  if (!parse_int<std::uint32_t>(v, 1, 3600, &c.flight.max_per_hour)) {
    return bad_value("dump_max_per_hour", v, "a number from 1 to 3600");
  }
  return {};
}

Status apply_dump_max_mb(std::string_view v, Config& c) {
  if (!parse_int<std::uint64_t>(v, 1, std::uint64_t{1} << 24, &c.flight.max_mb)) {
    return bad_value("dump_max_mb", v, "a number of MiB from 1 to 16777216");
  }
  return {};
}

Status apply_trigger(std::string_view v, Config& c) {
  return parse_triggers(v, &c.flight.triggers);
}

std::string dump_formats(const Config& c) {
  std::string out;
  for (const std::string& f : c.flight.formats) out += (out.empty() ? "" : "+") + f;
  return out;
}

std::string seconds_of(std::int64_t ns) {
  std::string s = std::to_string(ns / 1'000'000'000);
  if (ns % 1'000'000'000 != 0) s = std::to_string(ns / 1'000'000) + "m";
  return s + "s";
}

// The value of a number field of Config, as help() shows a default.
template <auto Field>
std::string number(const Config& c) {
  return std::to_string(c.*Field);
}
std::string text(const char* s) { return s; }

const char* clock_choice_name(ClockChoice c) {
  switch (c) {
    case ClockChoice::kTsc:
      return "tsc";
    case ClockChoice::kMonotonic:
      return "monotonic";
    case ClockChoice::kAuto:
      break;
  }
  return "auto";
}

struct OptionSpec {
  std::string_view key;
  std::string_view value_hint;
  // The default, shown in help(): read from a default-constructed Config, where every default
  // is written once (config.h).
  std::string (*default_value)(const Config& defaults);
  std::string_view help;
  Status (*apply)(std::string_view value, Config& config);
};

constexpr OptionSpec kOptions[] = {
    {"ring", "RECORDS", number<&Config::ring_capacity>,
     "records per thread ring (rounded up to a power of two; 32 bytes each). When a ring is "
     "full the newest event is dropped and counted",
     apply_ring},
    {"rings_mb", "MIB", number<&Config::rings_mb>,
     "most memory for all thread rings together; a thread that starts recording past it records "
     "nothing until rings are free again, its events counted as dropped (events_dropped_no_ring)",
     apply_rings_mb},
    {"flush_ms", "MS", number<&Config::flush_ms>, "how often the collector drains the rings",
     apply_flush_ms},
    {"nvtx", "on|off", [](const Config& c) { return text(c.nvtx ? "on" : "off"); },
#if GPUPROBE_HAVE_NVTX
     "also push NVTX ranges (domain \"gpuprobe\") when an NVTX tool such as Nsight Systems is "
     "attached",
#else
     "also push NVTX ranges (this build has no NVTX headers: no effect)",
#endif
     apply_nvtx},
    {"clock", "auto|tsc|monotonic",
     [](const Config& c) { return text(clock_choice_name(c.clock)); },
     "timestamp source; auto uses the TSC when it is invariant, else CLOCK_MONOTONIC", apply_clock},
    {"categories", "all|NAME+NAME...",
     [](const Config& c) { return text(c.categories ? "" : "all"); },
     "categories this session records: app, step, python, torch, compile, gc, alloc, cuda, "
     "user0..user7",
     apply_categories},
    {"rank", "N", [](const Config&) { return text("$RANK"); },
     "distributed rank written into the outputs", apply_rank},
    {"world_size", "N", [](const Config&) { return text("$WORLD_SIZE"); },
     "number of ranks written into the outputs", apply_world_size},
    {"cupti", "all|KIND+KIND...", [](const Config&) { return text(""); },
     "record GPU activity through CUPTI: kernel, memcpy, memset, runtime, driver, sync, "
     "overhead; the API kinds keep launches, copies, sets, allocations, syncs and blocking "
     "waits, and all_api keeps every runtime and driver call",
     apply_cupti},
    {"cupti_api", "callbacks|activity",
     [](const Config& c) { return text(c.gpu_api_callbacks ? "callbacks" : "activity"); },
     "how the kept runtime and driver calls are recorded: from CUPTI callbacks into the calling "
     "thread's ring, or as CUPTI's API activity records; all_api always uses the latter",
     apply_cupti_api},
    {"cupti_buffers", "N", number<&Config::gpu_buffers>,
     "CUPTI activity buffers allocated when the session starts; more are allocated as CUPTI asks "
     "(it keeps one per thread that calls CUDA), up to cupti_mb",
     apply_cupti_buffers},
    {"cupti_buffer_kb", "KIB", number<&Config::gpu_buffer_kb>, "size of each CUPTI activity buffer",
     apply_cupti_buffer_kb},
    {"cupti_mb", "MIB", number<&Config::gpu_max_mb>,
     "most memory for CUPTI activity buffers; past it CUPTI drops records, counted in "
     "gpu.dropped (gpu.buffers_exhausted counts the refused buffer requests)",
     apply_cupti_mb},
    {"attribution_ms", "MS", number<&Config::attribution_ms>,
     "how long GPU work waits for the gpuprobe range around its launch to close before it is "
     "written without one",
     apply_attribution_ms},
    {"gpu_burst", "ON/EVERY", [](const Config&) { return text(""); },
     "record the cupti= activity only in bursts: ON in every EVERY (e.g. 1s/60s), the first "
     "at the start, and also for dump_after after each dump's moment; the trace's counter "
     "\"gpuprobe GPU recording\" says when, and the GPU metrics say they are sampled",
     apply_gpu_burst},
    {"sched", "PERIOD|off",
     [](const Config& c) {
       return c.sched_period_ns ? std::to_string(c.sched_period_ns / 1'000'000) + "ms"
                                : text("off");
     },
     "sample every thread's scheduler statistics (time on a CPU, time waiting for one) this "
     "often, as counters \"sched running ns (tid N)\" and \"sched waiting ns (tid N)\", so "
     "that the report tells a slow request's running from its waiting for a CPU and from its "
     "being blocked (a lock, I/O, sleep), and names what ran meanwhile",
     apply_sched},
    {"names", "N", number<&Config::max_names>,
     "most distinct run-time names per session; later ones record as \"<name table full>\" and "
     "are counted",
     apply_names},
    {"metrics_names", "N", number<&Config::metrics_names>,
     "range names that get a duration histogram in metrics= and metrics_file= (the first N "
     "seen); the ranges of later names are counted in gpuprobe_range_names_overflowed_total",
     apply_metrics_names},
    {"metrics_ranges", "NAME+NAME...", [](const Config&) { return text(""); },
     "export only these range names in the metrics (e.g. request+decode); others are left out",
     apply_metrics_ranges},
    {"flight", "SECONDS", [](const Config&) { return text(""); },
     "flight recorder: keep the last SECONDS of everything recorded (ranges, instants, counters, "
     "GPU activity) in memory, overwriting the oldest (counted), and write it only as a dump: "
     "on a trigger, gpuprobe::dump(), gpuprobe.dump(), or POST /dump on the metrics port",
     apply_flight},
    {"flight_mb", "MIB", [](const Config& c) { return std::to_string(c.flight.mb); },
     "most memory the flight recorder keeps; past it the oldest events go first (counted), "
     "whatever their age",
     apply_flight_mb},
    {"dump", "DIR", [](const Config& c) { return c.flight.dir; },
     "where dumps go, one directory each, named by UTC time, host, pid and rank, written under a "
     "temporary name and renamed when complete",
     apply_dump},
    {"dump_format", "KEY+KEY...", dump_formats,
     "the outputs each dump writes (output keys above, e.g. perfetto+chrome+tensorboard, or "
     "window: the recorder's own bytes, written as fast as they can be copied and read by every "
     "gpuprobe command; gpuprobe convert makes the others of it); every dump also has dump.json, "
     "which describes it",
     apply_dump_format},
    {"dump_after", "DURATION", [](const Config& c) { return seconds_of(c.flight.after_ns); },
     "how long after a trigger a dump keeps recording before it is written; recording never "
     "stops",
     apply_dump_after},
    {"trigger", "SPEC+SPEC...", [](const Config&) { return text(""); },
     "dump by itself when: slow:NAME>200ms (one range NAME longer), p99:NAME>50ms/10s (any "
     "pNN of NAME over a rolling window above; needs 1/(1-q) samples in the window, 100 for "
     "p99), signal[:SIGUSR1|SIGUSR2] (default SIGUSR2)",
     apply_trigger},
    {"dump_cooldown", "DURATION", [](const Config& c) { return seconds_of(c.flight.cooldown_ns); },
     "least time between two dumps that triggers start (requests through the API or HTTP are "
     "not held back by it)",
     apply_dump_cooldown},
    {"dump_max_per_hour", "N",
     [](const Config& c) { return std::to_string(c.flight.max_per_hour); },
     "most dumps in any hour; triggers past it are counted, not written", apply_dump_max_per_hour},
    {"dump_max_mb", "MIB", [](const Config& c) { return std::to_string(c.flight.max_mb); },
     "most disk all dumps in the dump directory take; the oldest are deleted to make room",
     apply_dump_max_mb},
};

const OptionSpec* find_option(std::string_view key) {
  for (const OptionSpec& o : kOptions) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool is_option_key(std::string_view key) { return find_option(key) != nullptr; }

Status parse_config(std::string_view text, Config* config) {
  // A NUL would cut a path or a name short where C strings take over: refused, not truncated.
  if (text.find('\0') != std::string_view::npos)
    return Status::Error("the config string contains a NUL byte");
  std::vector<std::string_view> options_seen;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::Error("config item " + quoted(item) + " has no '=': expected key=value");
    }
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    if (const OptionSpec* option = find_option(key)) {
      // An option given twice is a mistake (which one was meant?); outputs may repeat.
      if (std::find(options_seen.begin(), options_seen.end(), key) != options_seen.end())
        return Status::Error("config key " + quoted(key) + " is given twice");
      options_seen.push_back(key);
      Status s = option->apply(value, *config);
      if (!s.ok()) return s;
    } else if (SinkRegistry::get().contains(key)) {
      if (value.empty()) return Status::Error("config key " + quoted(key) + " needs a value");
      config->sinks.push_back(SinkSpec{std::string(key), std::string(value)});
    } else {
      return Status::Error("unknown config key " + quoted(key) +
                           " (see gpuprobe::Session::help())");
    }
  }
  if (config->ring_capacity * sizeof(detail::Record) > (config->rings_mb << 20)) {
    return Status::Error("rings_mb=" + std::to_string(config->rings_mb) +
                         " cannot hold even one ring of " + std::to_string(config->ring_capacity) +
                         " records (32 bytes each)");
  }
  if (config->flight.seconds == 0) {
    for (const char* key : {"dump", "dump_format", "dump_after", "trigger", "dump_cooldown",
                            "dump_max_per_hour", "dump_max_mb", "flight_mb"}) {
      if (std::find(options_seen.begin(), options_seen.end(), key) != options_seen.end()) {
        return Status::Error(std::string("config key '") + key +
                             "' needs the flight recorder: add flight=SECONDS (e.g. flight=30)");
      }
    }
  }
  if (config->gpu_burst_every_ns != 0 && config->gpu_kinds == 0) {
    return Status::Error(
        "config key 'gpu_burst' needs GPU activity to sample: add cupti=KINDS (e.g. cupti=all)");
  }
  if (config->rank < 0) {
    if (const char* env = std::getenv("RANK"))
      parse_int(std::string_view(env), 0, 1 << 24, &config->rank);
  }
  if (config->world_size < 0) {
    if (const char* env = std::getenv("WORLD_SIZE")) {
      parse_int(std::string_view(env), 1, 1 << 24, &config->world_size);
    }
  }
  return {};
}

std::string config_help() {
  std::string out =
      "gpuprobe config: key=value pairs separated by ',' ('+' joins values inside a key).\n"
      "Outputs:\n";
  const auto line = [&out](std::string_view key, std::string_view hint, std::string_view def,
                           std::string_view help) {
    std::string head = "  " + std::string(key) + "=" + std::string(hint);
    if (head.size() < 30) head.resize(30, ' ');
    out += head + " " + std::string(help);
    if (!def.empty()) out += " [default: " + std::string(def) + "]";
    out += "\n";
  };
  for (const SinkRegistry::Entry& sink : SinkRegistry::get().entries()) {
    line(sink.key, sink.value_hint, "", sink.help);
  }
  out += "Options:\n";
  const Config defaults;
  for (const OptionSpec& o : kOptions) line(o.key, o.value_hint, o.default_value(defaults), o.help);
  out +=
      "The environment variable GPUPROBE takes the same string and starts a session when the\n"
      "program starts; it stops at normal exit.\n";
  return out;
}

}  // namespace gpuprobe::core
