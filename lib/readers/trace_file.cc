#include "readers/trace_file.h"

#include <cstring>

#include "formats/flight_window.h"
#include "readers/byte_source.h"
#include "readers/flight_window_reader.h"
#include "readers/mlir_timing_reader.h"
#include "readers/perfetto_trace_reader.h"

namespace gpuprobe::readers {

Status read_trace_file(const std::string& path, Sink& sink, const ProgressFn& progress,
                       TraceFormat* format) {
  // The first bytes tell the format: JSON starts with '{' or '[' after any whitespace; a
  // Perfetto trace with 0x0a (field 1, length-delimited), which is also a newline, so the
  // decision needs the bytes after it.
  std::unique_ptr<ByteSource> in;
  if (Status s = ByteSource::open_file(path, &in); !s.ok()) return s;
  char head[64];
  const std::size_t n = in->read(head, sizeof head);
  if (!in->status().ok()) return in->status();
  std::size_t i = 0;
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (Status s = ByteSource::open_file(path, &in); !s.ok()) return s;
  if (n >= sizeof formats::flight_window::kMagic &&
      std::memcmp(head, formats::flight_window::kMagic, sizeof formats::flight_window::kMagic) ==
          0) {
    if (format != nullptr) *format = TraceFormat::kFlightWindow;
    return read_flight_window(*in, sink, progress);
  }
  if (looks_like_mlir_timing(head, n)) {  // before Chrome's: its JSON is an array too
    if (format != nullptr) *format = TraceFormat::kMlirTiming;
    return read_mlir_timing(*in, sink, progress);
  }
  if (i < n && (head[i] == '{' || head[i] == '[')) {
    if (format != nullptr) *format = TraceFormat::kChrome;
    return read_chrome_trace(*in, sink, progress);
  }
  if (n > 0 && head[0] == 0x0a) {
    if (format != nullptr) *format = TraceFormat::kPerfetto;
    return read_perfetto_trace(*in, sink, progress);
  }
  return Status::Error(path +
                       ": byte 0: expected a Chrome trace ('{' or '['), a Perfetto "
                       "trace (a packet, byte 0x0a), a flight window (GPWINDOW) or an MLIR "
                       "timing report ('===-'), found " +
                       (n == 0 ? std::string("an empty file")
                               : "byte " + std::to_string(static_cast<unsigned char>(head[0]))));
}

}  // namespace gpuprobe::readers
