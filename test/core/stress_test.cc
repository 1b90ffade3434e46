// Many threads recording nested ranges into small rings while others start and exit: every
// event is either written or counted as dropped, and every thread's ranges nest.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

using testing::CapturedEvent;
using testing::CaptureSink;

// Records `iterations` groups of three nested ranges plus an instant (4 events each).
std::uint64_t record_nested(int iterations) {
  for (int i = 0; i < iterations; ++i) {
    GPUPROBE_RANGE("level0");
    {
      GPUPROBE_RANGE("level1");
      ScopedRange level2(i % 2 ? "level2_odd" : "level2_even");
      GPUPROBE_INSTANT("tick");
    }
  }
  return 4 * static_cast<std::uint64_t>(iterations);
}

// True if the thread's ranges form a proper nesting: sorted by begin (longer first on ties),
// each range lies entirely inside the enclosing open one or after it.
bool properly_nested(std::vector<CapturedEvent> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const CapturedEvent& a, const CapturedEvent& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  });
  std::vector<std::int64_t> open_ends;
  for (const CapturedEvent& r : ranges) {
    if (r.end_ns < r.begin_ns) return false;
    while (!open_ends.empty() && open_ends.back() <= r.begin_ns) open_ends.pop_back();
    if (!open_ends.empty() && r.end_ns > open_ends.back()) return false;
    open_ends.push_back(r.end_ns);
  }
  return true;
}

TEST_CASE("Stress: written + dropped == produced, and ranges nest, with thread churn") {
  auto sink = std::make_shared<CaptureSink>();
  // Small rings and a slow collector, so that drops really happen.
  Session session("ring=256,flush_ms=2", {sink});
  REQUIRE(session.ok());

  std::atomic<std::uint64_t> produced{0};
  std::vector<std::thread> long_lived;
  for (int t = 0; t < 6; ++t) {
    long_lived.emplace_back([&] {
      for (int round = 0; round < 40; ++round) {
        produced += record_nested(200);
        std::this_thread::yield();
      }
    });
  }
  // Meanwhile, waves of short-lived threads start, record a little and exit.
  std::thread churner([&] {
    for (int wave = 0; wave < 100; ++wave) {
      std::vector<std::thread> wave_threads;
      for (int i = 0; i < 10; ++i)
        wave_threads.emplace_back([&] { produced += record_nested(20); });
      for (std::thread& t : wave_threads) t.join();
    }
  });
  for (std::thread& t : long_lived) t.join();
  churner.join();
  REQUIRE(session.stop().ok());

  const Stats stats = session.stats();
  const std::vector<CapturedEvent> events = sink->events();
  INFO("produced " << produced << " written " << stats.written << " dropped " << stats.dropped);
  REQUIRE(stats.threads.size() == 6 + 1000);
  REQUIRE(stats.written == events.size());
  REQUIRE(stats.written + stats.dropped == produced.load());
  REQUIRE(stats.dropped > 0);  // the configuration is meant to overflow

  std::map<std::uint32_t, std::vector<CapturedEvent>> ranges_by_thread;
  std::map<std::uint32_t, std::uint64_t> written_by_thread;
  for (const CapturedEvent& e : events) {
    ++written_by_thread[e.thread];
    if (e.type == EventType::kRange) ranges_by_thread[e.thread].push_back(e);
  }
  for (std::size_t i = 0; i < stats.threads.size(); ++i) {
    REQUIRE(stats.threads[i].written == written_by_thread[static_cast<std::uint32_t>(i)]);
  }
  for (auto& [thread, ranges] : ranges_by_thread) {
    INFO("thread index " << thread);
    REQUIRE(properly_nested(ranges));
  }
}

}  // namespace
}  // namespace gpuprobe
