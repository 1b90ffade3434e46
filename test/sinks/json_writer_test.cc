#include "sinks/json_writer.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "support/catch.hpp"

namespace gpuprobe::sinks {
namespace {

std::string roundtrip(const std::string& s) {
  std::string json;
  append_json_string(&json, s);
  return nlohmann::json::parse(json).get<std::string>();
}

TEST_CASE("Strings with quotes, backslashes and control characters survive a round trip") {
  for (const std::string& s :
       {std::string("plain"), std::string("a\"quoted\"name"), std::string("back\\slash\\"),
        std::string("new\nline\ttab\rcr\bbs\fff"), std::string("\x01\x02\x1f\x7f", 4),
        std::string("nul\0inside", 10), std::string(""), std::string("</script>")}) {
    INFO(s);
    REQUIRE(roundtrip(s) == s);
  }
}

TEST_CASE("Non-ASCII UTF-8 survives unchanged") {
  for (const std::string& s : {std::string("caf\xC3\xA9"), std::string("\xE6\xB7\xB1\xE5\xBA\xA6"),
                               std::string("\xF0\x9F\x94\xA5 hot"), std::string("\xE2\x80\xA8")}) {
    std::string json;
    append_json_string(&json, s);
    REQUIRE(json == "\"" + s + "\"");  // written as-is, not \u-escaped
    REQUIRE(roundtrip(s) == s);
  }
}

TEST_CASE("Invalid UTF-8 becomes U+FFFD, so the JSON stays valid") {
  const std::string replacement = "\xEF\xBF\xBD";
  struct Case {
    std::string in, out;
  };
  const Case cases[] = {
      {"a\xFF"
       "b",
       "a" + replacement + "b"},
      {"\xC3", replacement},                                      // truncated sequence
      {"\xC0\xAF", replacement + replacement},                    // overlong
      {"\xED\xA0\x80", replacement + replacement + replacement},  // surrogate
      {"\xF4\x90\x80\x80", replacement + replacement + replacement + replacement},  // > U+10FFFF
  };
  for (const Case& c : cases) {
    REQUIRE(roundtrip(c.in) == c.out);
  }
}

TEST_CASE("Microseconds keep nanosecond precision") {
  const auto micros = [](std::int64_t ns) {
    std::string s;
    append_micros(&s, ns);
    return s;
  };
  REQUIRE(micros(0) == "0.000");
  REQUIRE(micros(1) == "0.001");
  REQUIRE(micros(999) == "0.999");
  REQUIRE(micros(1000) == "1.000");
  REQUIRE(micros(123456789) == "123456.789");
  REQUIRE(micros(-1500) == "-1.500");
  REQUIRE(micros(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775.808");
  // 2.5 days of nanoseconds still parse back exactly as a double.
  const std::int64_t ns = 215'999'123'456'789;
  REQUIRE(std::llround(nlohmann::json::parse(micros(ns)).get<double>() * 1000.0) == ns);
}

TEST_CASE("Doubles are shortest round-trip; non-finite values become null") {
  const auto number = [](double v) {
    std::string s;
    append_double(&s, v);
    return s;
  };
  REQUIRE(number(12.0) == "12");
  REQUIRE(number(0.1) == "0.1");
  REQUIRE(number(-3.25) == "-3.25");
  REQUIRE(nlohmann::json::parse(number(1.0 / 3.0)).get<double>() == 1.0 / 3.0);
  REQUIRE(number(std::nan("")) == "null");
  REQUIRE(number(std::numeric_limits<double>::infinity()) == "null");
}

}  // namespace
}  // namespace gpuprobe::sinks
