// Small string helpers shared by tests.
#pragma once

#include <string>

namespace gpuprobe::testing {

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace gpuprobe::testing
