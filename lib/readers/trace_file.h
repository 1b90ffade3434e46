// A trace file of any format gpuprobe reads — Chrome JSON, Perfetto protobuf, a flight window
// (formats/flight_window.h) or MLIR's pass timing report (mlir_timing_reader.h), any of them
// gzipped — told apart by its content, read into a Sink.
#pragma once

#include <string>

#include "gpuprobe/sink.hpp"
#include "readers/chrome_trace_reader.h"

namespace gpuprobe::readers {

enum class TraceFormat { kChrome, kPerfetto, kFlightWindow, kMlirTiming };

// Reads `path` into `sink`. `format`, when not null, receives the format found.
Status read_trace_file(const std::string& path, Sink& sink, const ProgressFn& progress = {},
                       TraceFormat* format = nullptr);

}  // namespace gpuprobe::readers
