// Small string helpers shared by tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gpuprobe::testing {

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A file's whole content ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gpuprobe::testing
