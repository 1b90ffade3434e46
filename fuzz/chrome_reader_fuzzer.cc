// libFuzzer target: the Chrome trace reader on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_sink.h"
#include "readers/chrome_trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = gpuprobe::readers::ByteSource::from_memory(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  gpuprobe::fuzz::FuzzSink sink;
  (void)gpuprobe::readers::read_chrome_trace(*in, sink);
  return 0;
}
