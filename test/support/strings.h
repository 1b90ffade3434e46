// Small string helpers shared by tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gpuprobe::testing {

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Whether `text` has `line` as one of its lines.
inline bool has_line(const std::string& text, const std::string& line) {
  return text.rfind(line + "\n", 0) == 0 || contains(text, "\n" + line + "\n");
}

// A file's whole content ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gpuprobe::testing
