// libFuzzer target: a trace file as the command-line tool opens it — format detection and, for
// gzip input, decompression — on arbitrary bytes (written to a temporary file).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz/fuzz_sink.h"
#include "readers/trace_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/gpuprobe_fuzz_" + std::to_string(getpid()) + ".trace";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  gpuprobe::fuzz::FuzzSink sink;
  (void)gpuprobe::readers::read_trace_file(path, sink);
  return 0;
}
