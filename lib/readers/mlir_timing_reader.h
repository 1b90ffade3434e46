// Reads MLIR's pass timing report — what `mlir-opt -mlir-timing` (and any MLIR tool's
// PassManager with timing on) prints: the text table of its tree or list display, or the JSON
// of `-mlir-output-format=json` — into a Sink, so that a pass pipeline's time reads like any
// trace: each pass, nested pipeline and analysis a range of its wall time in category "mlir" on
// one thread ("MLIR passes"), inside its parent, under one range for the total.
//
// The report holds durations, not start times, so the ranges are laid end to end in the
// report's order from the trace's start; a parent is at least as long as its children (MLIR
// rounds each figure to 0.1 ms, and sums threads' time inside a parallel pipeline).
#pragma once

#include <cstddef>

#include "gpuprobe/sink.hpp"
#include "readers/byte_source.h"
#include "readers/chrome_trace_reader.h"

namespace gpuprobe::readers {

// Whether a file's first bytes are such a report: the text's rule of '=' and '-', or a JSON
// array whose first object starts with "user" or "wall".
bool looks_like_mlir_timing(const char* head, std::size_t n);

// Reads the report into `sink` (open, writes, close). On malformed input returns one error naming
// the file, the byte offset (the line, for text) and what was expected.
Status read_mlir_timing(ByteSource& in, Sink& sink, const ProgressFn& progress = {});

}  // namespace gpuprobe::readers
