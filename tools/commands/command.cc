#include "tools/commands/command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

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

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string output_kind(const std::string& out) {
  const std::string plain = ends_with(out, ".gz") ? out.substr(0, out.size() - 3) : out;
  if (ends_with(plain, ".json")) return "chrome";
  if (ends_with(plain, ".pftrace") || ends_with(plain, ".perfetto-trace")) return "perfetto";
  if (ends_with(out, "/") || std::filesystem::is_directory(out)) return "tensorboard";
  return "";
}

std::vector<std::string> trace_files_in(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Not only regular files: a FIFO or a device named like a trace is refused by the reader
    // with an error that names it, rather than passed over in silence.
    if (!entry.is_directory(ec) &&
        (name.find(".json") != std::string::npos || name.find(".pftrace") != std::string::npos))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace gpuprobe::tools
