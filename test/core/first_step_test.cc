// The first session of a process calibrates the TSC (a 20 ms wait) and opens its outputs before
// it records. Its first step, and its events, must start when recording starts, or step 0 holds
// gpuprobe's own start-up and the report blames the user's code for it. This file is its own
// process so that the session below is the first.
#include <time.h>

#include <chrono>
#include <memory>
#include <thread>

#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

std::int64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST_CASE("the first session's step 0 begins when the session is recording, not before") {
  auto sink = std::make_shared<testing::CaptureSink>();
  const std::int64_t before = wall_ns();
  Session session("clock=auto", {sink});
  REQUIRE(session.ok());
  const std::int64_t recording = wall_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  step();
  const std::int64_t stepped = wall_ns();
  REQUIRE(session.stop().ok());
  const auto steps = sink->named("ProfilerStep");
  REQUIRE(steps.size() == 1);
  INFO("session start took " << (recording - before) / 1000 << " us; step 0 began "
                             << (steps[0].begin_ns - recording) / 1000 << " us after it");
  // Step 0 is the user's 3 ms, not the session's start-up (the TSC calibration alone is 20 ms).
  // 2 ms of slack, a tenth of what it guards against: under a sanitizer on a loaded machine the
  // thread can be preempted between the step clock's reset and the constructor's return (385 us
  // was seen with 200 us allowed).
  CHECK(steps[0].begin_ns >= recording - 2'000'000);
  CHECK(steps[0].end_ns - steps[0].begin_ns <= stepped - recording + 2'000'000);
  CHECK(steps[0].end_ns - steps[0].begin_ns >= 3'000'000);
}

// Events another library timed (a compile's metrics) are recorded later at their own times.
TEST_CASE("ranges and instants recorded after the fact land at the wall times given") {
  auto sink = std::make_shared<testing::CaptureSink>();
  Session session("", {sink});
  REQUIRE(session.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(12));
  const std::int64_t now = wall_ns();
  range_at("compile 0/0", Category::kCompile, now - 10'000'000, now - 4'000'000);
  instant_at("recompile 0/1: guard", Category::kCompile, now - 10'000'000);
  range_at("from the future", Category::kCompile, now, now + 60'000'000'000);
  range_at("backwards", Category::kCompile, now - 1'000, now - 2'000);
  REQUIRE(session.stop().ok());
  const auto ranges = sink->named("compile 0/0");
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0].type == EventType::kRange);
  CHECK(std::abs(ranges[0].begin_ns - (now - 10'000'000)) < 20'000);
  CHECK(std::abs(ranges[0].end_ns - (now - 4'000'000)) < 20'000);
  const auto marks = sink->named("recompile 0/1: guard");
  REQUIRE(marks.size() == 1);
  CHECK(marks[0].type == EventType::kInstant);
  CHECK(std::abs(marks[0].begin_ns - (now - 10'000'000)) < 20'000);
  CHECK(sink->named("from the future").empty());
  CHECK(sink->named("backwards").empty());
}

}  // namespace
}  // namespace gpuprobe
