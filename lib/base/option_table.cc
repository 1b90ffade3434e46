#include "base/option_table.h"

#include <algorithm>

#include "base/option_values.h"

namespace gpuprobe::base {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool GivenKeys::has(std::string_view key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

void append_help_line(std::string* out, std::string_view key, std::string_view value_hint,
                      std::string_view default_value, std::string_view help) {
  std::string head = "  " + std::string(key) + "=" + std::string(value_hint);
  if (head.size() < 30) head.resize(30, ' ');
  *out += head + " " + std::string(help);
  if (!default_value.empty()) *out += " [default: " + std::string(default_value) + "]";
  *out += "\n";
}

const OptionSet::Bound* OptionSet::find(std::string_view key) const {
  for (const Bound& o : options_) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

Status OptionSet::parse(std::string_view text, const OtherKey& other) const {
  // A NUL would cut a path or a name short where C strings take over: refused, not truncated.
  if (text.find('\0') != std::string_view::npos)
    return Status::Error("the config string contains a NUL byte");
  GivenKeys given;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::Error("config item " + quoted(item) + " has no '=': expected key=value");
    }
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    if (const Bound* option = find(key)) {
      // An option given twice is a mistake (which one was meant?); outputs may repeat.
      if (given.has(key)) return Status::Error("config key " + quoted(key) + " is given twice");
      given.add(key);
      if (Status s = option->apply(value); !s.ok()) return s;
    } else if (Status s = other(key, value); !s.ok()) {
      return s;
    }
  }
  for (const auto& check : checks_) {
    if (Status s = check(given); !s.ok()) return s;
  }
  return {};
}

void OptionSet::append_help(std::string* out) const {
  for (const Bound& o : options_)
    append_help_line(out, o.key, o.value_hint, o.default_value, o.help);
}

}  // namespace gpuprobe::base
