// The errors of one session: each is printed once to stderr as it happens and kept for
// Session::error(), so a failure is both visible to a person and testable through the API.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "base/notice.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::core {

using base::print_notice;

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
