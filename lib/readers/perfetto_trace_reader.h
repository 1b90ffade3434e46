// Reads Perfetto's protobuf trace format — gpuprobe's own traces and other track-event traces —
// streaming, packet by packet, into a Sink: slices (BEGIN/END) on thread tracks as ranges,
// ProfilerStep#N slices as steps, instants, counter tracks, and GPU work and CUDA API calls
// (categories "kernel", "gpu_memcpy", "cuda_runtime", ...) with their debug annotations. Names
// are resolved through each sequence's interned data, times through its clock snapshots.
#pragma once

#include "gpuprobe/sink.hpp"
#include "readers/byte_source.h"
#include "readers/chrome_trace_reader.h"

namespace gpuprobe::readers {

// Reads the whole trace into `sink` (open, writes, close). On malformed input returns one error
// naming the file, the byte offset and what was expected; the sink is closed with what was read.
Status read_perfetto_trace(ByteSource& in, Sink& sink, const ProgressFn& progress = {});

}  // namespace gpuprobe::readers
