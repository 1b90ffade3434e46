#include "readers/exact_decimal.h"

#include <cstddef>

namespace gpuprobe::readers {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The end of the run of digits starting at `i`.
std::size_t digits_end(std::string_view t, std::size_t i) {
  while (i < t.size() && is_digit(t[i])) ++i;
  return i;
}

}  // namespace

bool decimal_to_scaled(std::string_view t, int scale, std::int64_t* out, DecimalError* error) {
  const auto fail = [&](DecimalError why) {
    if (error != nullptr) *error = why;
    return false;
  };
  // The grammar: sign, integer part (no leading zero), optional fraction, optional exponent.
  std::size_t i = 0;
  const bool negative = i < t.size() && t[i] == '-';
  if (negative) ++i;
  const std::size_t int_begin = i, int_end = digits_end(t, i);
  if (int_end == int_begin || (int_end - int_begin > 1 && t[int_begin] == '0'))
    return fail(DecimalError::kSyntax);
  i = int_end;
  std::size_t frac_begin = i, frac_end = i;
  if (i < t.size() && t[i] == '.') {
    frac_begin = i + 1;
    frac_end = digits_end(t, frac_begin);
    if (frac_end == frac_begin) return fail(DecimalError::kSyntax);
    i = frac_end;
  }
  long long exponent = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    const bool minus = i < t.size() && t[i] == '-';
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    const std::size_t exp_begin = i;
    for (; i < t.size() && is_digit(t[i]); ++i) {
      if (exponent < 1000000) exponent = exponent * 10 + (t[i] - '0');  // beyond: all the same
    }
    if (i == exp_begin) return fail(DecimalError::kSyntax);
    if (minus) exponent = -exponent;
  }
  if (i != t.size()) return fail(DecimalError::kSyntax);

  // The digits, integer part then fraction, as one sequence; its value is M × 10^power.
  const std::size_t int_len = int_end - int_begin, total = int_len + (frac_end - frac_begin);
  const auto digit = [&](std::size_t k) {
    return t[k < int_len ? int_begin + k : frac_begin + (k - int_len)] - '0';
  };
  std::size_t first = 0;
  while (first < total && digit(first) == 0) ++first;
  const long long significant = static_cast<long long>(total - first);
  const long long power = exponent + scale - static_cast<long long>(frac_end - frac_begin);
  if (significant == 0) {
    *out = 0;  // "0", "-0.000", "0e99"
    if (error != nullptr) *error = DecimalError::kNone;
    return true;
  }
  // Kept digits (the value's integer part) and the rounding of the dropped ones. 19 digits fit
  // an unsigned 64-bit integer; more than 19 before the point are beyond int64.
  const long long keep = power >= 0 ? significant : significant + power;
  if (keep + (power > 0 ? power : 0) > 19) return fail(DecimalError::kOverflow);
  std::uint64_t v = 0;
  for (long long k = 0; k < keep; ++k) v = v * 10 + static_cast<std::uint64_t>(digit(first + k));
  if (power > 0) {
    for (long long k = 0; k < power; ++k) v *= 10;
  } else if (keep >= 0 && keep < significant) {
    // Round half to even: the first dropped digit decides, then whether any later one is not 0,
    // then the parity of what is kept. (keep < 0: the first dropped digit is a leading zero,
    // below half: the value rounds to 0.)
    const int next = digit(first + keep);
    bool beyond = false;
    for (long long k = keep + 1; k < significant && !beyond; ++k) beyond = digit(first + k) != 0;
    if (next > 5 || (next == 5 && (beyond || (v & 1) != 0))) ++v;
  }
  constexpr std::uint64_t kMaxPositive = 9223372036854775807ull;
  if (v > kMaxPositive + (negative ? 1 : 0)) return fail(DecimalError::kOverflow);
  *out = negative ? (v == kMaxPositive + 1 ? INT64_MIN : -static_cast<std::int64_t>(v))
                  : static_cast<std::int64_t>(v);
  if (error != nullptr) *error = DecimalError::kNone;
  return true;
}

}  // namespace gpuprobe::readers
