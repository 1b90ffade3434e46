// What was open at a moment: per thread the innermost range around it, else the next range to
// begin, and the trace's span.
#include "analysis/ranges_at.h"

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

Stats feed(analysis::RangesAt& at, Trace& t) {
  TraceInfo info;
  info.rank = 3;
  REQUIRE(at.open(info).ok());
  REQUIRE(at.write(EventBatch{t.events.data(), t.events.size(), &t.time, &t.threads}).ok());
  Stats stats;
  REQUIRE(at.close(stats, t.time).ok());
  return stats;
}

TEST_CASE("the innermost range open on each thread at the time") {
  Trace t;
  t.threads.resize(2);
  t.threads[0].name = "main";
  t.range(kRequest, 0, 10 * kMs);
  t.range(kCompute, 2 * kMs, 8 * kMs);  // inside the request, around 5 ms
  t.range(kLaunch, 3 * kMs, 4 * kMs);   // inside, but over before 5 ms
  t.events.push_back(Event{EventType::kRange, 1, &kParse, 1 * kMs, 6 * kMs, 0.0});
  analysis::RangesAt at(5 * kMs);
  feed(at, t);
  CHECK(at.rank() == 3);
  REQUIRE(at.open_ranges().size() == 2);
  CHECK(at.open_ranges()[0].thread == "main");
  CHECK(at.open_ranges()[0].name == "compute");
  CHECK(at.open_ranges()[1].thread == "thread 1");  // unnamed
  CHECK(at.open_ranges()[1].name == "parse");
  CHECK(at.next_range().name.empty());
  CHECK(at.first_ns() == 0);
  CHECK(at.last_ns() == 10 * kMs);
}

TEST_CASE("in no range: the next one to begin") {
  Trace t;
  t.range(kRequest, 0, 2 * kMs);
  t.range(kCompute, 9 * kMs, 12 * kMs);
  t.range(kLaunch, 6 * kMs, 7 * kMs);
  analysis::RangesAt at(4 * kMs);
  feed(at, t);
  CHECK(at.open_ranges().empty());
  CHECK(at.next_range().name == "launch");
  CHECK(at.next_range().begin_ns == 6 * kMs);
}

}  // namespace
}  // namespace gpuprobe::test
