#include "gpu/launch_matcher.h"

#include "support/catch.hpp"

namespace gpuprobe::gpu {
namespace {

TEST_CASE("Work starting before its launch is counted, whichever record arrives first") {
  LaunchMatcher m(1'000'000);
  m.on_launch(1, 100);
  m.on_work(1, 150);  // fine
  m.on_work(2, 190);  // arrives first, starts before its launch below
  m.on_launch(2, 200);
  m.on_launch(3, 300);
  m.on_work(3, 299);  // one tick early
  REQUIRE(m.starts_before_launch() == 2);
}

TEST_CASE("Several pieces of work under one launch (a graph) are each checked") {
  LaunchMatcher m(1'000'000);
  m.on_launch(7, 1000);
  m.on_work(7, 1010);
  m.on_work(7, 1020);
  m.on_work(7, 990);
  REQUIRE(m.starts_before_launch() == 1);
}

TEST_CASE("Launches without GPU work are forgotten after the horizon") {
  LaunchMatcher m(100);
  for (std::uint32_t c = 1; c <= 50; ++c) m.on_launch(c, c);  // e.g. cudaMalloc: no GPU work
  m.on_launch(1000, 10'000);
  m.prune();
  REQUIRE(m.pending() == 1);
}

}  // namespace
}  // namespace gpuprobe::gpu
