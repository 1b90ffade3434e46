// Core's options: how the recording runtime records (the thread rings, the collector, the clock,
// the categories, the name table, the rank written into the outputs). Declared here, beside the
// code that reads them; the session layer puts the table together with the other layers'.
#pragma once

#include <cstdint>
#include <optional>

#include "base/option_table.h"

namespace gpuprobe::core {

// `clock=`: the timestamp source.
enum class ClockChoice : std::uint8_t { kAuto, kTsc, kMonotonic };

// What `ring=`, `rings_mb=`, `flush_ms=`, `nvtx=`, `clock=`, `categories=`, `rank=`,
// `world_size=` and `names=` choose; every default is written here once.
struct RecordingOptions {
  std::uint64_t ring_capacity = 32768;
  std::uint64_t rings_mb = 1024;
  std::uint32_t flush_ms = 20;
  bool nvtx = true;
  ClockChoice clock = ClockChoice::kAuto;
  std::optional<std::uint32_t> categories;  // unset: keep the process-wide switches
  int rank = -1;                            // unset (-1): $RANK, when it is a rank
  int world_size = -1;                      // unset (-1): $WORLD_SIZE, when it is a count
  std::uint32_t max_names = 65536;
};

// ring= ... world_size=, with their check (the rings fit rings_mb; rank and world_size from the
// environment where not given).
const base::OptionTable<RecordingOptions>& recording_options();

// names=: a table of its own only so that help() keeps listing it where it always has (after
// the GPU and sched options); it fills the same RecordingOptions.
const base::OptionTable<RecordingOptions>& name_options();

}  // namespace gpuprobe::core
