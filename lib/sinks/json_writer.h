// Appending JSON fragments to a string, fast and always valid: strings are escaped (and invalid
// UTF-8 replaced with U+FFFD, since strict readers reject it), numbers are exact.
// Hand-written rather than nlohmann::json or another library: the Chrome sink writes tens of
// millions of events a second through it, and a DOM or a generic serializer would allocate per
// event (the tests read the output back with nlohmann::json, an independent parser).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gpuprobe::sinks {

// Appends `s` as a quoted JSON string.
void append_json_string(std::string* out, std::string_view s);

// Appends an integer.
void append_int(std::string* out, std::int64_t v);

// Appends `, "name": value` for each pair: the integer members of an object after its first.
void append_int_members(std::string* out,
                        std::initializer_list<std::pair<const char*, std::int64_t>> members);

// Appends `ns` nanoseconds as microseconds with exactly three decimals ("12.345"), the way
// Kineto keeps nanosecond precision in a double-valued field. Exact: no floating point.
void append_micros(std::string* out, std::int64_t ns);

// Appends a double with the fewest digits that read back to the same value; NaN and infinities,
// which JSON cannot express, as null.
void append_double(std::string* out, double v);

}  // namespace gpuprobe::sinks
