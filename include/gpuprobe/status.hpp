/// @file status.hpp
/// @brief `gpuprobe::Status`: the result of an operation that can fail for reasons outside the
/// program's control (a bad config string, an unwritable path, a full disk).
///
/// gpuprobe never throws into the host program. Every operation that can fail returns a Status;
/// the message is written for a person and names what was wrong (the key, the path, the byte).
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace gpuprobe {

/// Success, or an error with a human-readable message. [[nodiscard]], as absl::Status is: a
/// failure silently ignored is the bug this type exists to prevent (cast to void to mean it).
class [[nodiscard]] Status {
 public:
  /// Success.
  Status() = default;

  /// An error carrying `message`. An empty message still means an error.
  static Status Error(std::string message) { return Status(std::move(message)); }

  /// True on success.
  bool ok() const noexcept { return !failed_; }

  /// The error message; empty on success.
  const std::string& message() const noexcept { return message_; }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}

  bool failed_ = false;
  std::string message_;
};

}  // namespace gpuprobe
