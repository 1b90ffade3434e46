#include "core/error_log.h"

#include <cstdio>

namespace gpuprobe::core {

void print_notice(const std::string& message) noexcept {
  // stdio rather than iostreams: this can run during static initialization (the GPUPROBE
  // variable), before std::cerr is guaranteed to exist.
  std::fprintf(stderr, "gpuprobe: %s\n", message.c_str());
}

void ErrorLog::add(std::string message) noexcept {
  print_notice(message);
  try {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.push_back(std::move(message));
  } catch (...) {
  }
}

bool ErrorLog::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_.empty();
}

std::string ErrorLog::joined() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const std::string& m : messages_) {
    if (!out.empty()) out += '\n';
    out += m;
  }
  return out;
}

Status ErrorLog::first() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_.empty() ? Status() : Status::Error(messages_.front());
}

}  // namespace gpuprobe::core
