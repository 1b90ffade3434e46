// The option table a component declares its config keys with, and the set that binds tables to
// the structs they fill: parsing, a key given twice, other keys, the checks, help lines.
#include "base/option_table.h"

#include <iterator>
#include <string>
#include <vector>

#include "base/option_values.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe::base {
namespace {

using testing::contains;

struct Toy {
  int size = 3;
  bool loud = false;
};

Status apply_size(std::string_view v, Toy& t) {
  if (!parse_int(v, 1, 10, &t.size)) return bad_value("size", v, "a size from 1 to 10");
  return {};
}

Status apply_loud(std::string_view v, Toy& t) {
  if (!parse_switch(v, &t.loud)) return bad_value("loud", v, "on or off");
  return {};
}

// loud= needs size= given with it.
Status check(Toy&, const GivenKeys& given) {
  if (given.has("loud") && !given.has("size")) return Status::Error("loud needs size");
  return {};
}

constexpr OptionSpec<Toy> kSpecs[] = {
    {"size", "N", [](const Toy& t) { return std::to_string(t.size); }, "how big", apply_size},
    {"loud", "on|off", [](const Toy&) { return std::string(); }, "how loud", apply_loud},
};
constexpr OptionTable<Toy> kTable{kSpecs, std::size(kSpecs), check};

TEST_CASE("An option set parses each key into its table's struct and hands on the others") {
  Toy toy;
  OptionSet options;
  options.add(kTable, &toy);
  CHECK(options.contains("size"));
  CHECK_FALSE(options.contains("out"));
  std::vector<std::string> others;
  const auto other = [&others](std::string_view key, std::string_view value) {
    others.push_back(std::string(key) + "=" + std::string(value));
    return Status();
  };
  REQUIRE(options.parse(" size = 7 ,out=a, loud=on,out=b,", other).ok());
  CHECK(toy.size == 7);
  CHECK(toy.loud);
  CHECK(others == std::vector<std::string>{"out=a", "out=b"});  // outputs may repeat

  const Status twice = options.parse("size=2,size=3", other);
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.message() == "config key 'size' is given twice");
  const Status bad = options.parse("size=11", other);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message() == "config key 'size': '11' is not a size from 1 to 10");
  const Status checked = options.parse("loud=off", other);
  REQUIRE_FALSE(checked.ok());
  CHECK(checked.message() == "loud needs size");
  CHECK_FALSE(options.parse("size", other).ok());
  CHECK(contains(options.parse(std::string_view("size=1\0", 7), other).message(), "NUL"));
}

TEST_CASE("Help lists each option with its hint, help and default from a default struct") {
  Toy toy;
  toy.size = 9;  // the target's values are not the defaults
  OptionSet options;
  options.add(kTable, &toy);
  std::string help;
  options.append_help(&help);
  CHECK(help ==
        "  size=N                       how big [default: 3]\n"
        "  loud=on|off                  how loud\n");
}

}  // namespace
}  // namespace gpuprobe::base
