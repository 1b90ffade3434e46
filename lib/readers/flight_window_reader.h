// Reads a flight window file (formats/flight_window.h: a dump written with dump_format=window)
// into a Sink: the events of the dump's window, with the session's threads, clock and drops as
// the dump recorded them. Streaming: one chunk (64 KiB) in memory at a time, besides the tables.
#pragma once

#include "gpuprobe/sink.hpp"
#include "readers/byte_source.h"
#include "readers/chrome_trace_reader.h"

namespace gpuprobe::readers {

// Reads the whole file into `sink` (open, writes, close). On malformed input returns one error
// naming the file, the byte offset and what was expected; the sink is closed with what was read.
Status read_flight_window(ByteSource& in, Sink& sink, const ProgressFn& progress = {});

}  // namespace gpuprobe::readers
