#include "core/recording_options.h"

#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include "base/option_values.h"
#include "core/categories.h"
#include "core/clock.h"
#include "gpuprobe/detail/fixed_ring.hpp"

namespace gpuprobe::core {
namespace {

using base::bad_value;
using base::parse_int;
using Options = RecordingOptions;

std::uint64_t round_up_pow2(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

Status apply_ring(std::string_view v, Options& c) {
  std::uint64_t n = 0;
  if (!parse_int<std::uint64_t>(v, 16, std::uint64_t{1} << 26, &n)) {
    return bad_value("ring", v, "a record count from 16 to 67108864");
  }
  c.ring_capacity = round_up_pow2(n);
  return {};
}

Status apply_rings_mb(std::string_view v, Options& c) {
  if (!parse_int<std::uint64_t>(v, 1, std::uint64_t{1} << 20, &c.rings_mb)) {
    return bad_value("rings_mb", v, "a number of MiB from 1 to 1048576");
  }
  return {};
}

Status apply_flush_ms(std::string_view v, Options& c) {
  if (!parse_int<std::uint32_t>(v, 1, 10000, &c.flush_ms)) {
    return bad_value("flush_ms", v, "a number of milliseconds from 1 to 10000");
  }
  return {};
}

Status apply_nvtx(std::string_view v, Options& c) {
  if (!base::parse_switch(v, &c.nvtx)) return bad_value("nvtx", v, "on or off");
  return {};
}

Status apply_clock(std::string_view v, Options& c) {
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

Status apply_categories(std::string_view v, Options& c) {
  std::uint32_t mask = kAllCategories;
  if (v != "all") {
    const auto bit_of = [](std::string_view name) -> std::optional<std::uint32_t> {
      const std::optional<Category> category = category_by_name(name);
      if (!category) return std::nullopt;
      return 1u << static_cast<unsigned>(*category);
    };
    Status s =
        base::parse_name_list("categories", v,
                              "app, step, python, torch, compile, gc, alloc, cuda, user0..user7 "
                              "or names given with name_category",
                              bit_of, &mask);
    if (!s.ok()) return s;
  }
  c.categories = mask;
  return {};
}

Status apply_rank(std::string_view v, Options& c) {
  if (!parse_int(v, 0, 1 << 24, &c.rank)) return bad_value("rank", v, "a rank from 0");
  return {};
}

Status apply_world_size(std::string_view v, Options& c) {
  if (!parse_int(v, 1, 1 << 24, &c.world_size)) return bad_value("world_size", v, "a count from 1");
  return {};
}

Status apply_names(std::string_view v, Options& c) {
  if (!parse_int<std::uint32_t>(v, 1, 1u << 24, &c.max_names)) {
    return bad_value("names", v, "a count from 1 to 16777216");
  }
  return {};
}

// The rings fit rings_mb; rank and world_size not given come from the environment.
Status check(Options& c, const base::GivenKeys&) {
  if (c.ring_capacity * sizeof(detail::Record) > (c.rings_mb << 20)) {
    return Status::Error("rings_mb=" + std::to_string(c.rings_mb) +
                         " cannot hold even one ring of " + std::to_string(c.ring_capacity) +
                         " records (32 bytes each)");
  }
  if (c.rank < 0) {
    if (const char* env = std::getenv("RANK"))
      parse_int(std::string_view(env), 0, 1 << 24, &c.rank);
  }
  if (c.world_size < 0) {
    if (const char* env = std::getenv("WORLD_SIZE")) {
      parse_int(std::string_view(env), 1, 1 << 24, &c.world_size);
    }
  }
  return {};
}

// The value of a number field, as help() shows a default.
template <auto Field>
std::string number(const Options& c) {
  return std::to_string(c.*Field);
}

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

constexpr base::OptionSpec<Options> kRecording[] = {
    {"ring", "RECORDS", number<&Options::ring_capacity>,
     "records per thread ring (rounded up to a power of two; 32 bytes each). When a ring is "
     "full the newest event is dropped and counted",
     apply_ring},
    {"rings_mb", "MIB", number<&Options::rings_mb>,
     "most memory for all thread rings together; a thread that starts recording past it records "
     "nothing until rings are free again, its events counted as dropped (events_dropped_no_ring)",
     apply_rings_mb},
    {"flush_ms", "MS", number<&Options::flush_ms>, "how often the collector drains the rings",
     apply_flush_ms},
    {"nvtx", "on|off", [](const Options& c) { return std::string(c.nvtx ? "on" : "off"); },
#if GPUPROBE_HAVE_NVTX
     "also push NVTX ranges (domain \"gpuprobe\") when an NVTX tool such as Nsight Systems is "
     "attached",
#else
     "also push NVTX ranges (this build has no NVTX headers: no effect)",
#endif
     apply_nvtx},
    {"clock", "auto|tsc|monotonic",
     [](const Options& c) { return std::string(clock_choice_name(c.clock)); },
     "timestamp source; auto uses the TSC when it is invariant, else CLOCK_MONOTONIC", apply_clock},
    {"categories", "all|NAME+NAME...",
     [](const Options& c) { return std::string(c.categories ? "" : "all"); },
     "categories this session records: app, step, python, torch, compile, gc, alloc, cuda, "
     "user0..user7",
     apply_categories},
    {"rank", "N", [](const Options&) { return std::string("$RANK"); },
     "distributed rank written into the outputs", apply_rank},
    {"world_size", "N", [](const Options&) { return std::string("$WORLD_SIZE"); },
     "number of ranks written into the outputs", apply_world_size},
};

constexpr base::OptionSpec<Options> kNames[] = {
    {"names", "N", number<&Options::max_names>,
     "most distinct run-time names per session; later ones record as \"<name table full>\" and "
     "are counted",
     apply_names},
};

}  // namespace

const base::OptionTable<RecordingOptions>& recording_options() {
  static constexpr base::OptionTable<RecordingOptions> kTable{kRecording, std::size(kRecording),
                                                              check};
  return kTable;
}

const base::OptionTable<RecordingOptions>& name_options() {
  static constexpr base::OptionTable<RecordingOptions> kTable{kNames, std::size(kNames)};
  return kTable;
}

}  // namespace gpuprobe::core
