// A wall-clock time (ns since the Unix epoch) as UTC text, to the millisecond.
#pragma once

#include <cstdint>
#include <string>

namespace gpuprobe::base {

enum class UtcStyle {
  kExtended,  // "2026-12-02T06:42:21.183Z" (ISO 8601, for people)
  kBasic,     // "20261202T064221.183Z" (ISO 8601 basic, for file names)
};

std::string utc_time(std::int64_t wall_ns, UtcStyle style);

}  // namespace gpuprobe::base
