// libFuzzer target: the restricted unpickler that reads PyTorch's flight recorder dumps, on
// arbitrary bytes; what it reads is walked as the dump reader walks it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "readers/pickle_value.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpuprobe::readers::PickleValue v;
  if (gpuprobe::readers::read_pickle(std::string_view(reinterpret_cast<const char*>(data), size),
                                     "fuzz.pkl", &v)
          .ok()) {
    (void)v.as_text();
    (void)v.find("entries");
  }
  return 0;
}
