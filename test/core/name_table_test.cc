#include "core/name_table.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpuprobe/range.hpp"
#include "support/catch.hpp"

namespace gpuprobe::core {
namespace {

TEST_CASE("Interning returns one stable site per name and category") {
  const CallSite* a = detail::intern("alpha", Category::kApp);
  const CallSite* b = detail::intern(std::string("alp") + "ha", Category::kApp);
  const CallSite* c = detail::intern("alpha", Category::kGc);
  const CallSite* d = detail::intern("beta", Category::kApp);
  REQUIRE(a == b);
  REQUIRE(a != c);
  REQUIRE(a != d);
  REQUIRE(std::string(a->name) == "alpha");
  REQUIRE(c->category == Category::kGc);
}

TEST_CASE("Names that collide in the per-thread cache stay distinct") {
  std::set<const CallSite*> sites;
  for (int i = 0; i < 2000; ++i)
    sites.insert(detail::intern("name_" + std::to_string(i), Category::kApp));
  REQUIRE(sites.size() == 2000);
  for (int i = 0; i < 2000; ++i) {
    const std::string name = "name_" + std::to_string(i);
    REQUIRE(std::string(detail::intern(name, Category::kApp)->name) == name);
  }
}

TEST_CASE("Threads interning the same names concurrently agree") {
  std::vector<std::vector<const CallSite*>> seen(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i)
        seen[t].push_back(detail::intern("shared_" + std::to_string(i), Category::kApp));
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 1; t < 4; ++t) REQUIRE(seen[t] == seen[0]);
}

TEST_CASE("A full name table hands out one overflow site and counts the misses") {
  NameTable& table = NameTable::get();
  const std::size_t old_limit = table.limit();
  table.set_limit(table.size() + 2);
  table.reset_overflowed();
  const CallSite* first = detail::intern("overflow_a", Category::kApp);
  const CallSite* second = detail::intern("overflow_b", Category::kApp);
  const CallSite* third = detail::intern("overflow_c", Category::kApp);
  const CallSite* fourth = detail::intern("overflow_d", Category::kApp);
  REQUIRE(std::string(first->name) == "overflow_a");
  REQUIRE(std::string(second->name) == "overflow_b");
  REQUIRE(std::string(third->name) == "<name table full>");
  REQUIRE(fourth == third);
  REQUIRE(table.overflowed() == 2);
  // Names interned before the table filled up are still found.
  REQUIRE(detail::intern("overflow_a", Category::kApp) == first);
  table.set_limit(old_limit);
}

}  // namespace
}  // namespace gpuprobe::core
