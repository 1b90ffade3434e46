// The arguments a GPU activity carries in a trace, under Kineto's names: one table that the
// Chrome and Perfetto writers write from and both readers read back through, so that the four
// cannot drift apart (they had: the Perfetto writer summed the shared memory and left out the
// context, the graph node and the synchronization arguments).
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe::formats {

enum class GpuArgType : std::uint8_t {
  kInt,     // an integer
  kDouble,  // a number
  kString,  // text (write-only here: readers resolve it themselves, e.g. the range)
  kDim3,    // three integers: a JSON array in Chrome traces, NAME.x/.y/.z in Perfetto traces
};

struct GpuArg {
  const char* name;
  GpuArgType type;
  // Whether `a` carries the argument (its kind, and for optional ones a non-zero value).
  bool (*carried)(const GpuActivity& a);
  // The value: `dur_ns` is the activity's duration (for rates); `i` the component of a kDim3.
  std::int64_t (*get_int)(const GpuActivity& a, std::int64_t dur_ns, int i);
  double (*get_double)(const GpuActivity& a, std::int64_t dur_ns);
  const char* (*get_string)(const GpuActivity& a);
  // Stores a value read back; nullptr for arguments derived from others (written, not read).
  void (*set)(GpuActivity& a, int i, double value);
  // For kDim3: the names of the components in Perfetto traces ("grid.x", ...).
  const char* components[3];
};

// Every argument, in the order writers write them.
struct GpuArgTable {
  const GpuArg* begin() const;
  const GpuArg* end() const;
};
GpuArgTable gpu_args();

// The argument called `name`, with the component a Perfetto "grid.y" names in `*component`;
// nullptr for names that are not in the table.
const GpuArg* find_gpu_arg(std::string_view name, int* component);

}  // namespace gpuprobe::formats
