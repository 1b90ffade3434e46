// Exact decimal text to a scaled integer: "1696789012345678.123" microseconds to
// 1696789012345678123 nanoseconds without passing through a double (which holds 53 bits: since-
// 1970 times in ns have 61, so a double moves them by up to 256 ns). The readers turn every time
// they read as text (JSON "ts"/"dur" in µs, MLIR's report in seconds) into int64 ns through it.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuprobe::readers {

// Why decimal_to_scaled() refused its text.
enum class DecimalError : std::uint8_t {
  kNone,
  kSyntax,    // not a JSON number: "", "-", ".5", "5.", "01", "1e", "+1", "0x10", "1 2"
  kOverflow,  // the value times 10^scale is beyond int64's range
};

// Reads `text`, a number in JSON's grammar (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), as
// value × 10^`scale`, exactly, into `*out`. Digits beyond what the scale keeps are rounded to the
// nearest integer, ties to even ("0.0005" µs is 0 ns, "0.0015" µs is 2 ns): Kineto writes exactly
// three decimals of µs, so its times never round; other writers' longer fractions round without
// bias. Exponents are exact ("1.7e15" µs is 1700000000000000000 ns). A false return leaves `*out`
// unchanged and says why in `*error` when `error` is not null.
bool decimal_to_scaled(std::string_view text, int scale, std::int64_t* out,
                       DecimalError* error = nullptr);

// The same for microseconds to nanoseconds (scale 3), the times of Chrome trace JSON.
inline bool micros_text_to_ns(std::string_view text, std::int64_t* ns,
                              DecimalError* error = nullptr) {
  return decimal_to_scaled(text, 3, ns, error);
}

}  // namespace gpuprobe::readers
