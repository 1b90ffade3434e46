// Decimal text to exact integer nanoseconds: every digit Kineto writes kept (since-1970 times
// need 61 bits, a double has 53), further digits rounded half to even, exponents exact, JSON's
// grammar enforced, and values beyond int64 refused rather than wrapped or saturated.
#include "readers/exact_decimal.h"

#include <cstdint>
#include <string>

#include "support/catch.hpp"

namespace gpuprobe {
namespace {

using readers::DecimalError;

std::int64_t ns_of(const std::string& text) {
  std::int64_t ns = -12345;
  DecimalError why = DecimalError::kSyntax;
  INFO(text);
  REQUIRE(readers::micros_text_to_ns(text, &ns, &why));
  CHECK(why == DecimalError::kNone);
  return ns;
}

DecimalError refusal(const std::string& text, int scale = 3) {
  std::int64_t ns = 77;
  DecimalError why = DecimalError::kNone;
  INFO(text);
  CHECK_FALSE(readers::decimal_to_scaled(text, scale, &ns, &why));
  CHECK(ns == 77);  // untouched
  return why;
}

TEST_CASE("microseconds as Kineto and others write them become exact nanoseconds") {
  CHECK(ns_of("0") == 0);
  CHECK(ns_of("12") == 12000);
  CHECK(ns_of("12.5") == 12500);
  CHECK(ns_of("12.345") == 12345);
  CHECK(ns_of("0.001") == 1);
  CHECK(ns_of("-1") == -1000);
  CHECK(ns_of("-0") == 0);
  CHECK(ns_of("0.000") == 0);
  // Since-1970 wall-clock µs with Kineto's three decimals: every nanosecond kept. Through a
  // double this was 1696789012345678080 (the nearest multiple of 256).
  CHECK(ns_of("1696789012345678.123") == 1696789012345678123LL);
  CHECK(ns_of("1696789012345678.124") == 1696789012345678124LL);
  CHECK(ns_of("1796789012345678") == 1796789012345678000LL);
}

TEST_CASE("digits beyond the nanosecond round half to even") {
  CHECK(ns_of("12.3456") == 12346);  // above half
  CHECK(ns_of("12.3454") == 12345);  // below half
  CHECK(ns_of("0.0005") == 0);       // a tie: to even (0)
  CHECK(ns_of("0.0015") == 2);       // a tie: to even (2)
  CHECK(ns_of("0.0025") == 2);
  CHECK(ns_of("0.00250000001") == 3);  // just above a tie
  CHECK(ns_of("-0.0015") == -2);       // symmetric
  CHECK(ns_of("0.0000009") == 0);      // all dropped, far below half
  CHECK(ns_of("1696789012345678.1235") == 1696789012345678124LL);
  CHECK(ns_of("9223372036854775.8074") == INT64_MAX);  // rounds down onto the largest
}

TEST_CASE("exponents are exact where the value is representable") {
  CHECK(ns_of("1e3") == 1000000);
  CHECK(ns_of("1.5E+2") == 150000);
  CHECK(ns_of("1.7e15") == 1700000000000000000LL);
  CHECK(ns_of("1.696789012345678123e15") == 1696789012345678123LL);
  CHECK(ns_of("125e-2") == 1250);
  CHECK(ns_of("5e-4") == 0);  // 0.5 ns: a tie, to even
  CHECK(ns_of("0e999999") == 0);
  CHECK(ns_of("1e-999999999999") == 0);
  CHECK(ns_of("0.00000000000000000000000000001e29") == 1000);
}

TEST_CASE("the ends of int64's range, and beyond") {
  CHECK(ns_of("9223372036854775.807") == INT64_MAX);
  CHECK(ns_of("-9223372036854775.808") == INT64_MIN);
  CHECK(refusal("9223372036854775.808") == DecimalError::kOverflow);
  CHECK(refusal("-9223372036854775.809") == DecimalError::kOverflow);
  CHECK(refusal("9223372036854775.8075") == DecimalError::kOverflow);  // rounds up past it
  CHECK(refusal("1e16") == DecimalError::kOverflow);
  CHECK(refusal("1e999") == DecimalError::kOverflow);
  CHECK(refusal("99999999999999999999999999") == DecimalError::kOverflow);
  CHECK(refusal("18446744073709551616") == DecimalError::kOverflow);  // 2^64: no wrap
  // Seconds to ns (MLIR's report): scale 9.
  std::int64_t ns = 0;
  REQUIRE(readers::decimal_to_scaled("0.0123", 9, &ns));
  CHECK(ns == 12300000);
  REQUIRE(readers::decimal_to_scaled("9223372036.854775807", 9, &ns));
  CHECK(ns == INT64_MAX);
  CHECK(refusal("9223372037", 9) == DecimalError::kOverflow);
}

TEST_CASE("text that is not a JSON number is refused") {
  for (const char* text :
       {"",     "-",   ".5", "-.5", "5.",    "01",    "-01", "00",       "1e",  "1e+", "+1",
        "0x10", "1 2", " 1", "1 ",  "1.2.3", "1e5.5", "NaN", "Infinity", "1,5", "--1", "1E-+2"}) {
    CHECK(refusal(text) == DecimalError::kSyntax);
  }
}

}  // namespace
}  // namespace gpuprobe
