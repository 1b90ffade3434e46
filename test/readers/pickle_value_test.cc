// The restricted unpickler: Python's own pickles of plain data (protocols 2 and 4) read back to
// the values they hold; anything that would build an object is refused; hostile shapes (cycles,
// shared references multiplied, truncation) fail with an error instead of a crash or a blow-up.
#include "readers/pickle_value.h"

#include "support/catch.hpp"

namespace gpuprobe::test {
namespace {

using readers::PickleValue;
using K = PickleValue::Kind;

template <std::size_t N>
std::string bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// pickle.dumps({"s": "héllo", "i": [0, 255, 65535, -1, 2**31, -(2**40), 2**63 - 1], "f": 1.5,
//               "t": (True, False, None), "shared": [l, l]}, protocol=P), l = [1, 2]
const std::string kProtocol2 = bytes(
    "\x80\x02\x7d\x71\x00\x28\x58\x01\x00\x00\x00\x73\x71\x01\x58\x06\x00\x00\x00\x68\xc3\xa9\x6c"
    "\x6c\x6f\x71\x02\x58\x01\x00\x00\x00\x69\x71\x03\x5d\x71\x04\x28\x4b\x00\x4b\xff\x4d\xff\xff"
    "\x4a\xff\xff\xff\xff\x8a\x05\x00\x00\x00\x80\x00\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x08\xff"
    "\xff\xff\xff\xff\xff\xff\x7f\x65\x58\x01\x00\x00\x00\x66\x71\x05\x47\x3f\xf8\x00\x00\x00\x00"
    "\x00\x00\x58\x01\x00\x00\x00\x74\x71\x06\x88\x89\x4e\x87\x71\x07\x58\x06\x00\x00\x00\x73\x68"
    "\x61\x72\x65\x64\x71\x08\x5d\x71\x09\x28\x5d\x71\x0a\x28\x4b\x01\x4b\x02\x65\x68\x0a\x65\x75"
    "\x2e");
const std::string kProtocol4 = bytes(
    "\x80\x04\x95\x6c\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x01\x73\x94\x8c\x06\x68\xc3\xa9"
    "\x6c\x6c\x6f\x94\x8c\x01\x69\x94\x5d\x94\x28\x4b\x00\x4b\xff\x4d\xff\xff\x4a\xff\xff\xff\xff"
    "\x8a\x05\x00\x00\x00\x80\x00\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x08\xff\xff\xff\xff\xff\xff"
    "\xff\x7f\x65\x8c\x01\x66\x94\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x8c\x01\x74\x94\x88\x89\x4e"
    "\x87\x94\x8c\x06\x73\x68\x61\x72\x65\x64\x94\x5d\x94\x28\x5d\x94\x28\x4b\x01\x4b\x02\x65\x68"
    "\x0a\x65\x75\x2e");

void check_values(const PickleValue& v) {
  REQUIRE(v.kind == K::kDict);
  REQUIRE(v.find("s") != nullptr);
  CHECK(v.find("s")->text == "h\xc3\xa9llo");
  const PickleValue* ints = v.find("i");
  REQUIRE(ints != nullptr);
  REQUIRE(ints->items.size() == 7);
  const std::int64_t expected[] = {0, 255, 65535, -1, 2147483648LL, -1099511627776LL, INT64_MAX};
  for (std::size_t i = 0; i < 7; ++i) {
    std::int64_t got = 0;
    REQUIRE(ints->items[i].as_int(&got));
    CHECK(got == expected[i]);
  }
  CHECK(v.find("f")->number == 1.5);
  CHECK(v.find("t")->as_text() == "[True, False, ]");
  CHECK(v.find("shared")->as_text() == "[[1, 2], [1, 2]]");
  CHECK(v.find("absent") == nullptr);
}

TEST_CASE("Python's pickles of plain data read back to their values") {
  for (const std::string* data : {&kProtocol2, &kProtocol4}) {
    PickleValue v;
    REQUIRE(readers::read_pickle(*data, "t.pkl", &v).ok());
    check_values(v);
  }
}

TEST_CASE("TorchScript's typed-list builders read as the list; other references are refused") {
  // build_intlist([3, 4]) as TorchScript's pickler writes it: GLOBAL, the list in a tuple, REDUCE.
  const std::string builder = bytes(
      "\x80\x02"
      "ctorch.jit._pickle\nbuild_intlist\n"
      "]\x28K\x03K\x04"
      "e\x85R.");
  PickleValue v;
  REQUIRE(readers::read_pickle(builder, "t.pkl", &v).ok());
  CHECK(v.as_text() == "[3, 4]");

  const std::string os_system = bytes(
      "\x80\x02"
      "cos\nsystem\n"
      "X\x02\x00\x00\x00ls\x85R.");
  const Status s = readers::read_pickle(os_system, "evil.pkl", &v);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() ==
        "evil.pkl: byte 2: expected plain data, not a reference to os.system "
        "(objects are not built)");
  const Status b = readers::read_pickle(bytes("\x80\x02N\x81."), "t.pkl", &v);  // NEWOBJ
  REQUIRE_FALSE(b.ok());
  CHECK(b.message() == "t.pkl: byte 3: expected an opcode of plain data, not 0x81");
}

TEST_CASE("truncated, cyclic and multiplying pickles fail cleanly") {
  PickleValue v;
  for (std::size_t n = 0; n < kProtocol2.size(); ++n)
    CHECK_FALSE(readers::read_pickle(kProtocol2.substr(0, n), "t.pkl", &v).ok());
  // A list appended to itself: l = []; l.append(l).
  const Status cycle = readers::read_pickle(bytes("\x80\x02]q\x00h\x00"
                                                  "a."),
                                            "t.pkl", &v);
  REQUIRE_FALSE(cycle.ok());
  CHECK(cycle.message() == "t.pkl: nested deeper than 200 levels");
  // Each level a pair of the level below, 40 levels: 2^40 values from ~300 bytes.
  std::string doubling = bytes("\x80\x02N");
  for (int i = 0; i < 40; ++i) doubling += bytes("q\x00h\x00\x86");
  doubling += '.';
  const Status blowup = readers::read_pickle(doubling, "t.pkl", &v);
  REQUIRE_FALSE(blowup.ok());
  CHECK(blowup.message() == "t.pkl: more values than the file could hold");
  const Status len = readers::read_pickle(bytes("\x80\x02X\xff\xff\xff\x7f"
                                                "ab."),
                                          "t.pkl", &v);
  REQUIRE_FALSE(len.ok());
  CHECK(len.message() == "t.pkl: byte 2: expected a string within the file");
  const Status wide = readers::read_pickle(bytes("\x80\x02\x8a\x09"
                                                 "123456789."),
                                           "t.pkl", &v);
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.message() == "t.pkl: byte 2: expected an integer of 64 bits at most");
}

}  // namespace
}  // namespace gpuprobe::test
