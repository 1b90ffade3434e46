#include "core/error_log.h"

#include "base/notice.h"

namespace gpuprobe::core {

void ErrorLog::add(std::string message) noexcept {
  base::print_notice(message);
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
