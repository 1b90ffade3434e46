// The counters sched= records (session/sched_sampler.h) and the report reads
// (analysis/cpu_state.h): one schema for both. Values are the thread's totals since it started,
// in nanoseconds, as /proc/self/task/TID/schedstat gives them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuprobe::formats::sched_counters {

inline constexpr char kRunning[] = "sched running ns (tid ";
inline constexpr char kWaiting[] = "sched waiting ns (tid ";

inline std::string name(const char* kind, std::int64_t tid) {
  return kind + std::to_string(tid) + ")";
}

// The tid and kind of a counter's name: 1 running, 2 waiting, 0 not one of these.
inline int parse(const char* name, std::int64_t* tid) {
  const int kind = std::strncmp(name, kRunning, sizeof kRunning - 1) == 0   ? 1
                   : std::strncmp(name, kWaiting, sizeof kWaiting - 1) == 0 ? 2
                                                                            : 0;
  if (kind == 0) return 0;
  char* end = nullptr;
  *tid = std::strtoll(name + sizeof kRunning - 1, &end, 10);
  return end != nullptr && *end == ')' && end[1] == '\0' && *tid > 0 ? kind : 0;
}

}  // namespace gpuprobe::formats::sched_counters
