#include "base/notice.h"

#include <cstdio>

namespace gpuprobe::base {

void print_notice(const std::string& message) noexcept {
  // stdio rather than iostreams: this can run during static initialization (the GPUPROBE
  // variable), before std::cerr is guaranteed to exist.
  std::fprintf(stderr, "gpuprobe: %s\n", message.c_str());
}

}  // namespace gpuprobe::base
