// The errors of one session: each is printed once to stderr as it happens and kept for
// Session::error(), so a failure is both visible to a person and testable through the API.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::core {

// Prints "gpuprobe: <message>" to stderr: for conditions the program should know about that are
// not errors of the session (it goes on with less), such as "CUPTI unavailable: ...".
void print_notice(const std::string& message) noexcept;

class ErrorLog {
 public:
  void add(std::string message) noexcept;
  bool empty() const;
  // All messages, one per line.
  std::string joined() const;
  // The first error, or OK.
  Status first() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> messages_;
};

}  // namespace gpuprobe::core
