// Memory is bounded by bytes and returned: the rings of all threads together stay within
// `rings_mb`, names belong to sessions, and a thread's first event never waits behind another
// thread's ring being allocated.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/name_table.h"
#include "core/thread_registry.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

using testing::CaptureSink;

// Lets threads wait until all of them have arrived.
class Latch {
 public:
  explicit Latch(int count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (--count_ == 0) cv_.notify_all();
    cv_.wait(lock, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_;
};

// A burst of threads once took 1.9 GB of rings. Past the budget a thread records nothing, and
// every event it tried is counted, so written + dropped = produced still holds.
TEST_CASE("all rings together stay within rings_mb, and the events of threads past it count") {
  constexpr int kThreads = 8;
  constexpr int kEvents = 100;
  auto sink = std::make_shared<CaptureSink>();
  // Rings of 32768 records are 1 MiB: a few fit in 4 MiB, not eight.
  Session session("ring=32768,rings_mb=4", {sink});
  REQUIRE(session.ok());
  Latch recorded(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEvents; ++i) instant("burst");
      // Every thread holds its ring until all have recorded: none is recycled meanwhile.
      recorded.arrive_and_wait();
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(core::ThreadRegistry::get().allocated_bytes() <= std::uint64_t{4} << 20);
  REQUIRE(session.stop().ok());
  const Stats stats = sink->final_stats();
  const std::size_t written = sink->named("burst").size();
  CHECK(written % kEvents == 0);  // a thread has all its events or none
  CHECK(written >= kEvents);
  CHECK(written < std::size_t{kThreads} * kEvents);
  CHECK(stats.dropped_no_ring == std::size_t{kThreads} * kEvents - written);
  CHECK(stats.dropped == stats.dropped_no_ring);

  // Once the burst's threads are gone, and the collector has been by, their rings serve new
  // threads again.
  auto next = std::make_shared<CaptureSink>();
  Session again("ring=32768,rings_mb=4,flush_ms=1", {next});
  for (int t = 0; t < kThreads; ++t) {
    std::thread([] { instant("after"); }).join();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // far longer than flush_ms
  }
  REQUIRE(again.stop().ok());
  CHECK(next->named("after").size() == kThreads);
  CHECK(next->final_stats().dropped == 0);
}

TEST_CASE("rings_mb that cannot hold one ring is refused") {
  Session session("ring=4194304,rings_mb=64");
  CHECK_FALSE(session.ok());
  CHECK(session.error().find("rings_mb=64") != std::string::npos);
}

// A thread's ring is allocated and zeroed without the registry's lock: while one thread is
// still allocating, another gets its ring and records.
std::atomic<bool> g_first_allocation{true};
std::atomic<bool> g_other_recorded{false};
std::atomic<bool> g_saw_other{false};

void hold_first_allocation() {
  if (!g_first_allocation.exchange(false)) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!g_other_recorded.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  g_saw_other.store(g_other_recorded.load());
}

TEST_CASE("a thread's first event does not wait while another thread's ring is allocated") {
  auto sink = std::make_shared<CaptureSink>();
  // A ring size no earlier test used, so that both threads allocate.
  Session session("ring=8192", {sink});
  core::ThreadRegistry::get().set_allocation_hook_for_testing(&hold_first_allocation);
  std::thread slow([] { instant("slow"); });
  while (g_first_allocation.load()) std::this_thread::yield();  // `slow` is allocating
  std::thread fast([] {
    instant("fast");
    g_other_recorded.store(true);
  });
  fast.join();
  slow.join();
  core::ThreadRegistry::get().set_allocation_hook_for_testing(nullptr);
  REQUIRE(session.stop().ok());
  CHECK(g_saw_other.load());
  CHECK(sink->named("fast").size() == 1);
  CHECK(sink->named("slow").size() == 1);
}

// Names belonged to the process: once a session had filled the table, every later session
// recorded its new names as "<name table full>", and the memory was never returned.
TEST_CASE("names belong to sessions: a full table does not follow into the next ones") {
  core::NameTable& table = core::NameTable::get();
  const auto record = [](const std::string& prefix, int count) {
    for (int i = 0; i < count; ++i) {
      ScopedRange range(prefix + std::to_string(i));
    }
  };
  {
    auto sink = std::make_shared<CaptureSink>();
    Session first("names=100", {sink});
    record("first_", 101);
    REQUIRE(first.stop().ok());
    CHECK(sink->final_stats().names_overflowed == 1);
    CHECK(sink->named("<name table full>").size() == 1);
  }
  {
    auto sink = std::make_shared<CaptureSink>();
    Session second("names=100", {sink});
    record("second_", 100);
    REQUIRE(second.stop().ok());
    CHECK(sink->final_stats().names_overflowed == 0);
    CHECK(sink->named("second_99").size() == 1);
  }
  {
    auto sink = std::make_shared<CaptureSink>();
    Session third("names=100", {sink});
    // The first session's names are gone; this thread's cache of them must not be used.
    CHECK(table.size() == 100);               // the second session's
    CHECK(table.bytes() == 10 * 8 + 90 * 9);  // "second_0" .. "second_99"
    record("first_", 3);
    REQUIRE(third.stop().ok());
    CHECK(sink->named("first_2").size() == 1);
    CHECK(sink->final_stats().names_overflowed == 0);
  }
}

}  // namespace
}  // namespace gpuprobe
