// A dump's window written as a flight window file (formats/flight_window.h): the recorder's
// chunks that overlap it, byte for byte, with the tables and facts that read them. Where a
// Perfetto or Chrome trace of a full 256 MiB window takes seconds to encode, this takes the
// time of the write; `gpuprobe convert` makes any format of it later, on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flight/event_store.h"
#include "gpuprobe/status.hpp"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::flight {

struct WindowFacts {
  TraceInfo info;
  TimeBase time;
  Stats stats;  // with the threads the events' indices name
  std::uint64_t from_tick = 0;
  std::uint64_t to_tick = 0;
};

// Writes `snapshot`'s chunks that overlap the window to `path` (atomically: base/output_file.h),
// and `extra` — events the dump adds, such as its marker — as one more chunk.
[[nodiscard]] Status write_window_file(const std::string& path, const StoreSnapshot& snapshot,
                                       const std::vector<Event>& extra, const WindowFacts& facts);

}  // namespace gpuprobe::flight
