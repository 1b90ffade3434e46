// Writes GPU activity and CUDA API calls as Kineto does in Chrome trace JSON (the vocabulary is
// formats/kineto.h): kernels, copies, sets and syncs on "GPU n" processes with one thread per
// stream, API calls on the calling thread, and "ac2g" flow arrows from each launch to its GPU
// work.
#pragma once

#include <cstdint>
#include <string>

#include "gpuprobe/gpu_activity.hpp"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::sinks {

// Appends `a` as one complete event, followed by its flow event when it has one (",\n" between
// them). Timestamps are microseconds after `base_ns`; `host_pid` is the process's pid.
void append_gpu_event(std::string* out, const GpuActivity& a, const TimeBase& time,
                      std::int64_t base_ns, std::int64_t host_pid);

}  // namespace gpuprobe::sinks
