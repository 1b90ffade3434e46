#include "base/utc_time.h"

#include <cstdio>
#include <ctime>

namespace gpuprobe::base {

std::string utc_time(std::int64_t wall_ns, UtcStyle style) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::snprintf(text, sizeof text,
                style == UtcStyle::kBasic ? "%04d%02d%02dT%02d%02d%02d.%03dZ"
                                          : "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                utc.tm_sec, static_cast<int>(wall_ns / 1'000'000 % 1000));
  return text;
}

}  // namespace gpuprobe::base
