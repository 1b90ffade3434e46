// Reads Chrome trace-event JSON — gpuprobe's own and Kineto/torch.profiler's — streaming, event by
// event, into a Sink: complete ("X") and begin/end ("B"/"E") slices, instants, counters, steps
// (ProfilerStep#N), GPU work and CUDA API calls by Kineto's categories (kernel, gpu_memcpy,
// gpu_memset, cuda_runtime, cuda_driver, cuda_sync) with their args, thread names, the devices
// in deviceProperties, and gpuprobe's own statistics. Flow events are not read: sinks draw them
// again from correlation ids.
#pragma once

#include <functional>

#include "gpuprobe/sink.hpp"
#include "readers/byte_source.h"

namespace gpuprobe::readers {

// Called now and then while reading, with the share of the input read and the events so far.
using ProgressFn = std::function<void(double fraction, std::uint64_t events)>;

// Reads the whole trace into `sink` (open, writes, close). On malformed input returns one error
// naming the file, the byte offset and what was expected; the sink is closed with what was read.
Status read_chrome_trace(ByteSource& in, Sink& sink, const ProgressFn& progress = {});

}  // namespace gpuprobe::readers
