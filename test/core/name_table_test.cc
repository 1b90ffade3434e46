#include "core/name_table.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
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

// A NUL would end the name where C strings take over, and a huge name would be unreadable to
// readers (which take up to 1 MiB) and cost its size in memory for good.
TEST_CASE("NULs are written out, long names are cut at 64 KiB, all names at 64 MiB") {
  const std::string with_nul("before\0after", 12);
  CHECK(std::string(detail::intern(with_nul, Category::kApp)->name) == "before\\0after");
  const std::string huge(1 << 20, 'x');
  const std::string cut = detail::intern(huge, Category::kApp)->name;
  CHECK(cut.size() == (64u << 10) + 3);
  CHECK(cut.substr(cut.size() - 3) == "...");
  CHECK(detail::intern(huge, Category::kApp)->name == cut);  // the same site again
  // A cut never splits a UTF-8 character.
  std::string accents;
  while (accents.size() < (70u << 10)) accents += "\xc3\xa9";
  const std::string cut_accents = detail::intern(accents, Category::kApp)->name;
  CHECK(cut_accents.size() % 2 == 1);  // whole two-byte characters and "..."
  // Distinct 64 KiB names: at most 64 MiB of them, then the overflow site.
  NameTable& table = NameTable::get();
  table.reset_overflowed();
  std::size_t kept = 0;
  for (int i = 0; i < 1100; ++i) {
    std::string name = std::to_string(i) + std::string((64u << 10) - 8, 'n');
    kept += std::string(detail::intern(name, Category::kApp)->name) != "<name table full>";
  }
  CHECK(kept < 1024);
  CHECK(kept > 1000);
  CHECK(table.overflowed() == 1100 - kept);
}

// Each session that begins frees the names that neither it nor the one before used, while other
// threads look names up in their caches without the table's lock: a thread whose cache entry
// dates from a session two begins ago must never read the freed entry (TSan and ASan watch this
// test), nor ever be given another name's site. Threads record ranges under names of their own
// (a few, so that the cache hits) through session start/stop cycles; every name a session wrote
// is one that the thread which recorded it used.
TEST_CASE("Sessions beginning while threads look names up never free what a thread reads") {
  constexpr int kThreads = 4;
  constexpr int kCycles = 100;
  std::atomic<bool> stop{false};
  std::vector<std::atomic<std::int64_t>> tids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      tids[t].store(static_cast<std::int64_t>(::syscall(SYS_gettid)));
      std::vector<std::string> names;
      for (int k = 0; k < 8; ++k)
        names.push_back("churn t" + std::to_string(t) + " n" + std::to_string(k));
      for (std::uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        ManualRange r;
        r.begin(names[i % names.size()]);
        r.end();
        // And the lookup alone, whether a session runs or not.
        detail::intern(names[(i + 3) % names.size()], Category::kApp);
      }
    });
  }
  for (int t = 0; t < kThreads; ++t) {
    while (tids[t].load() == 0) std::this_thread::yield();
  }
  std::uint64_t checked = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    auto sink = std::make_shared<testing::CaptureSink>();
    {
      Session session("ring=4096,flush_ms=1", {sink});
      REQUIRE(session.ok());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    for (const testing::CapturedEvent& e : sink->events()) {
      if (e.name.rfind("churn ", 0) != 0) continue;
      int owner = -1;
      for (int t = 0; t < kThreads; ++t) {
        if (tids[t].load() == e.os_tid) owner = t;
      }
      REQUIRE(owner >= 0);
      REQUIRE(e.name.rfind("churn t" + std::to_string(owner) + " n", 0) == 0);
      ++checked;
    }
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  CHECK(checked > 0);
}

}  // namespace
}  // namespace gpuprobe::core
