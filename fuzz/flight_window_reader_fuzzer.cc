// libFuzzer target: the flight window reader (dump_format=window) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_sink.h"
#include "readers/flight_window_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = gpuprobe::readers::ByteSource::from_memory(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.gpwindow");
  gpuprobe::fuzz::FuzzSink sink;
  (void)gpuprobe::readers::read_flight_window(*in, sink);
  return 0;
}
