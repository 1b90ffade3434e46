// The values a config option takes, parsed the one way every component's options parse them
// (numbers in a range, on/off, "+"-joined lists, durations), and the messages that refuse them.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::base {

// Input echoed in a message: at most 80 bytes of it, so that a megabyte of config is one line.
std::string quoted(std::string_view s);

// "config key 'KEY': 'VALUE' is not EXPECTED".
Status bad_value(std::string_view key, std::string_view value, std::string_view expected);

// A decimal integer from `min` to `max`, the whole of `s`; false (and `*out` kept) otherwise.
template <class Int>
bool parse_int(std::string_view s, Int min, Int max, Int* out) {
  Int v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

// on/1/true/yes or off/0/false/no.
bool parse_switch(std::string_view s, bool* out);

// The items of a "+"-joined value, empty ones included (each caller says what they mean).
std::vector<std::string_view> plus_items(std::string_view v);

// Parses "NAME+NAME+..." into a bit mask, `bit_of` giving each name's bit (or nullopt); the
// messages list the `known` names.
template <class BitOf>
Status parse_name_list(std::string_view key, std::string_view v, std::string_view known,
                       BitOf bit_of, std::uint32_t* mask) {
  *mask = 0;
  if (v.empty()) {
    return Status::Error("config key " + quoted(key) +
                         " needs at least one name (known: " + std::string(known) + ")");
  }
  for (const std::string_view name : plus_items(v)) {
    const std::optional<std::uint32_t> bit = bit_of(name);
    if (!bit) {
      return Status::Error("config key " + quoted(key) + ": unknown name " + quoted(name) +
                           " (known: " + std::string(known) + ")");
    }
    *mask |= *bit;
  }
  return {};
}

// A duration with its unit, "200ms", "1.5s", "250us", "2m"; `bare_unit_ns` applies when the
// unit is left out (0: a unit is required). False on anything else, or a negative value.
bool parse_duration(std::string_view text, std::int64_t bare_unit_ns, std::int64_t* ns);

}  // namespace gpuprobe::base
