#include "formats/steps.h"

#include <cstdlib>
#include <cstring>

namespace gpuprobe::formats {
namespace {

constexpr CallSite kStepSite{kStepName, "", "", 0, 0xFF59A14Fu, Category::kStep};

}  // namespace

const CallSite& step_site() noexcept { return kStepSite; }

std::string step_event_name(std::int64_t number) {
  return std::string(kStepName) + "#" + std::to_string(number);
}

bool step_number(const char* name, long long* number) {
  constexpr std::size_t kPrefix = sizeof kStepName - 1;
  if (std::strncmp(name, kStepName, kPrefix) != 0 || name[kPrefix] != '#') return false;
  const char* digits = name + kPrefix + 1;
  if (*digits < '0' || *digits > '9') return false;
  char* rest = nullptr;
  *number = std::strtoll(digits, &rest, 10);
  return rest != digits && *rest == '\0';
}

}  // namespace gpuprobe::formats
