// base::printable_text: what a hostile reason or a forged dump.json may hold, made printable —
// escape sequences, line breaks, bidirectional overrides and bytes that are not UTF-8 written as
// their codes, valid text kept, the length bounded at a character's boundary.
#include "base/printable_text.h"

#include <string>

#include "support/catch.hpp"

namespace gpuprobe::base {
namespace {

TEST_CASE("printable text keeps text, writes control characters as their codes") {
  CHECK(printable_text("p99 too high", 200) == "p99 too high");
  CHECK(printable_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", 200) ==
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");  // é € and an emoji stay
  CHECK(printable_text("\x1b[2J\r\n\t\x7f", 200) == "\\x1b[2J\\x0d\\x0a\\x09\\x7f");
  CHECK(printable_text(std::string("a\0b", 3), 200) == "a\\x00b");
  CHECK(printable_text("\xc2\x9b"
                       "31m",
                       200) == "\\u009b31m");  // C1 CSI
  CHECK(printable_text("\xe2\x80\xae"
                       "evil\xe2\x80\xa8",
                       200) == "\\u202eevil\\u2028");
}

TEST_CASE("bytes that are not UTF-8 are written as their codes, one by one") {
  CHECK(printable_text("\xff", 200) == "\\xff");
  CHECK(printable_text("\xc0\xaf", 200) == "\\xc0\\xaf");                    // overlong '/'
  CHECK(printable_text("\xed\xa0\x80", 200) == "\\xed\\xa0\\x80");           // a surrogate
  CHECK(printable_text("\xf4\x90\x80\x80", 200) == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(printable_text("\xe2\x82", 200) == "\\xe2\\x82");                    // cut short
  CHECK(printable_text("\x80"
                       "a",
                       200) == "\\x80a");
}

TEST_CASE("the bound holds, cut at a character's boundary and marked") {
  CHECK(printable_text(std::string(300, 'a'), 200) == std::string(197, 'a') + "...");
  CHECK(printable_text(std::string(200, 'a'), 200) == std::string(200, 'a'));
  // 100 two-byte characters and one more: never half of one.
  std::string text;
  for (int i = 0; i < 101; ++i) text += "\xc3\xa9";
  const std::string cut = printable_text(text, 200);
  CHECK(cut.size() <= 200);
  CHECK(cut.substr(cut.size() - 3) == "...");
  CHECK(printable_text(cut.substr(0, cut.size() - 3), 1000) == cut.substr(0, cut.size() - 3));
  CHECK(printable_text(std::string(50, '\x1b'), 20).size() <= 20);
  CHECK(printable_text("abcdef", 2).empty());  // no room even for the mark
}

}  // namespace
}  // namespace gpuprobe::base
