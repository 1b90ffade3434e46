#include "base/option_values.h"

#include <cstdlib>

namespace gpuprobe::base {

std::string quoted(std::string_view s) {
  constexpr std::size_t kEcho = 80;
  if (s.size() <= kEcho) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, kEcho)) + "...' (" + std::to_string(s.size()) + " bytes)";
}

Status bad_value(std::string_view key, std::string_view value, std::string_view expected) {
  return Status::Error("config key " + quoted(key) + ": " + quoted(value) + " is not " +
                       std::string(expected));
}

bool parse_switch(std::string_view s, bool* out) {
  if (s == "on" || s == "1" || s == "true" || s == "yes") return *out = true, true;
  if (s == "off" || s == "0" || s == "false" || s == "no") return *out = false, true;
  return false;
}

std::vector<std::string_view> plus_items(std::string_view v) {
  std::vector<std::string_view> items;
  while (!v.empty()) {
    const std::size_t plus = v.find('+');
    items.push_back(v.substr(0, plus));
    v = plus == std::string_view::npos ? std::string_view() : v.substr(plus + 1);
  }
  return items;
}

bool parse_duration(std::string_view text, std::int64_t bare_unit_ns, std::int64_t* ns) {
  const std::size_t unit_at = text.find_first_not_of("0123456789.");
  const std::string_view number = text.substr(0, unit_at);
  const std::string_view unit =
      unit_at == std::string_view::npos ? std::string_view() : text.substr(unit_at);
  double scale = 0;
  if (unit.empty()) {
    scale = static_cast<double>(bare_unit_ns);
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (unit == "m" || unit == "min") {
    scale = 60e9;
  } else if (unit == "h") {
    scale = 3600e9;
  }
  if (scale == 0 || number.empty() || number.size() > 20) return false;
  const std::string s(number);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(v >= 0) || v * scale > 9e18) return false;
  *ns = static_cast<std::int64_t>(v * scale + 0.5);
  return true;
}

}  // namespace gpuprobe::base
