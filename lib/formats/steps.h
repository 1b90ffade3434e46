// Steps as traces name them: torch.profiler's "ProfilerStep#N" ranges. gpuprobe records a step
// with the site below and its number beside it; writers append "#N", readers take it off.
#pragma once

#include <cstdint>
#include <string>

#include "gpuprobe/call_site.hpp"

namespace gpuprobe::formats {

// The name of a step, without its "#N".
inline constexpr char kStepName[] = "ProfilerStep";

// The site of every step event (name kStepName, category kStep): the number travels in the
// event (Event::value), so a million steps intern one name, not a million.
const CallSite& step_site() noexcept;

// A step's name as traces show it: "ProfilerStep#<number>".
std::string step_event_name(std::int64_t number);

// The N of a step's name, "ProfilerStep#N" with N a non-negative decimal; false otherwise.
bool step_number(const char* name, long long* number);

}  // namespace gpuprobe::formats
