// Steps (gpuprobe::step): the session's step clock and the call site every step record uses.
#pragma once

#include <cstdint>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::core {

// A session starts at `start_ticks`: its first step begins there and is number 0.
void reset_steps(std::uint64_t start_ticks) noexcept;

// The site of step records: name "ProfilerStep", category kStep; the number travels in the
// record (Event::value), so a million steps intern one name, not a million.
const CallSite& step_site() noexcept;

}  // namespace gpuprobe::core
