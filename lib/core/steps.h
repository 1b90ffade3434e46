// Steps (gpuprobe::step): the session's step clock (the site of step records: formats/steps.h).
#pragma once

#include <cstdint>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::core {

// A session starts at `start_ticks`: its first step begins there and is number 0.
void reset_steps(std::uint64_t start_ticks) noexcept;

}  // namespace gpuprobe::core
