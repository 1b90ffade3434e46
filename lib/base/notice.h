// The one way gpuprobe speaks on stderr, for every layer: "gpuprobe: <message>", one line.
#pragma once

#include <string>

namespace gpuprobe::base {

// Prints "gpuprobe: <message>" to stderr: for conditions the program should know about that are
// not errors (it goes on with less), such as "CUPTI unavailable: ...". Never throws.
void print_notice(const std::string& message) noexcept;

}  // namespace gpuprobe::base
