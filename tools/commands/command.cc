#include "tools/commands/command.h"

#include <cstdio>

namespace gpuprobe::tools {

int fail(const Status& s) {
  std::fprintf(stderr, "gpuprobe: %s\n", s.message().c_str());
  return 1;
}

int write_page(const std::string& path, const std::string& page) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  const bool written = f != nullptr && std::fwrite(page.data(), 1, page.size(), f) == page.size();
  const bool closed = f != nullptr && std::fclose(f) == 0;
  if (!written || !closed) return fail(Status::Error("cannot write '" + path + "'"));
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace gpuprobe::tools
