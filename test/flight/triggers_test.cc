// The range triggers: slow:NAME>T fires for its slowest range in a batch and only for NAME;
// pNN:NAME>T/W waits for enough samples, fires when the quantile goes above T, and again only
// after it went back below.
#include "flight/triggers.h"

#include <vector>

#include "flight/trigger_spec.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe::flight {
namespace {

constexpr CallSite kRequest{"request", "", "", 0, 0, Category::kApp};
constexpr CallSite kOther{"other", "", "", 0, 0, Category::kApp};
constexpr std::uint64_t kMs = 1'000'000;  // ticks are nanoseconds here

std::vector<TriggerSpec> specs(const char* text) {
  std::vector<TriggerSpec> out;
  REQUIRE(parse_triggers(text, &out).ok());
  return out;
}

std::vector<Firing> observe(RangeTriggers& t, const std::vector<Event>& events) {
  const TimeBase time(0, 0, 1.0);
  const std::vector<ThreadInfo> threads(4);
  std::vector<Firing> fired;
  t.observe(EventBatch{events.data(), events.size(), &time, &threads}, &fired);
  return fired;
}

Event range(const CallSite* site, std::uint64_t begin_ms, std::uint64_t duration_ms,
            std::uint32_t thread = 0) {
  return Event{
      EventType::kRange, thread, site, begin_ms * kMs, (begin_ms + duration_ms) * kMs, 0.0};
}

TEST_CASE("slow: fires for the slowest range of its name above the threshold") {
  const auto s = specs("slow:request>200ms");
  RangeTriggers t(s);
  CHECK(observe(t, {range(&kRequest, 0, 150), range(&kOther, 0, 900)}).empty());
  const std::vector<Firing> fired =
      observe(t, {range(&kRequest, 1000, 250, 1), range(&kRequest, 2000, 400, 2),
                  range(&kRequest, 3000, 300, 3)});
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].at_tick == 2400 * kMs);
  CHECK(fired[0].thread == 2);
  CHECK(testing::contains(fired[0].reason, "request took 400 ms > 200 ms"));
  REQUIRE(fired[0].values.size() == 2);
  CHECK(fired[0].values[0].second == Approx(400));
  CHECK(observe(t, {range(&kRequest, 5000, 100)}).empty());
}

TEST_CASE("p99: needs 100 samples, fires going above, re-arms going below") {
  const auto s = specs("p99:request>50ms/10s");
  RangeTriggers t(s);
  std::vector<Event> batch;
  for (int i = 0; i < 98; ++i) batch.push_back(range(&kRequest, 100 + i, 10));
  batch.push_back(range(&kRequest, 200, 80));  // the slowest, but 99 samples are too few
  CHECK(observe(t, batch).empty());
  std::vector<Firing> fired = observe(t, {range(&kRequest, 300, 90)});  // 100 samples, p99 ~80
  REQUIRE(fired.size() == 1);
  CHECK(testing::contains(fired[0].reason, "p99 of request over the last 10 s is"));
  CHECK(testing::contains(fired[0].reason, "(100 ranges)"));
  // Still above: no second firing.
  CHECK(observe(t, {range(&kRequest, 400, 95)}).empty());
  // Ten seconds later the slow ones left the window: below; then above again fires again.
  batch.clear();
  for (int i = 0; i < 200; ++i) batch.push_back(range(&kRequest, 20'000 + i, 5));
  CHECK(observe(t, batch).empty());
  batch.clear();
  for (int i = 0; i < 10; ++i) batch.push_back(range(&kRequest, 21'000 + i, 70));
  fired = observe(t, batch);
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].values[1].first == "value_ms");
  CHECK(fired[0].values[1].second > 50);
}

Event instant(const CallSite* site, std::uint64_t at_ms, std::uint32_t thread = 0) {
  return Event{EventType::kInstant, thread, site, at_ms * kMs, at_ms * kMs, 0.0};
}

constexpr CallSite kRecompile1{"recompile 0/1: tensor 'x' size mismatch at index 0", "", "", 0,
                               0, Category::kCompile};
constexpr CallSite kRecompile2{"recompile 0/2: len(L['xs']) == 3", "", "", 0, 0,
                               Category::kCompile};
constexpr CallSite kLimitHit{"recompile limit hit: f (cache_size_limit 8)", "", "", 0, 0,
                             Category::kCompile};
constexpr CallSite kAppRecompile{"recompile 0/1: an app's own mark", "", "", 0, 0, Category::kApp};

TEST_CASE("recompile: fires for the batch's last recompile, not for the limit's warning") {
  const auto s = specs("recompile");
  RangeTriggers t(s);
  CHECK(observe(t, {instant(&kLimitHit, 5), instant(&kAppRecompile, 6), range(&kRequest, 0, 900)})
            .empty());
  const std::vector<Firing> fired =
      observe(t, {instant(&kRecompile2, 200, 2), instant(&kRecompile1, 100, 1)});
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].reason == "recompile 0/2: len(L['xs']) == 3");
  CHECK(fired[0].at_tick == 200 * kMs);
  CHECK(fired[0].thread == 2);
  CHECK(fired[0].spec->text == "recompile");
  CHECK(observe(t, {instant(&kRecompile1, 300)}).size() == 1);  // each batch's again
}

TEST_CASE("recompile>N/W: fires when more than N fall within W, re-arms at N or fewer") {
  const auto s = specs("recompile>2/10s");
  RangeTriggers t(s);
  CHECK(observe(t, {instant(&kRecompile1, 0), instant(&kRecompile1, 1000)}).empty());
  std::vector<Firing> fired = observe(t, {instant(&kRecompile2, 2000, 3)});
  REQUIRE(fired.size() == 1);
  CHECK(testing::contains(fired[0].reason, "recompile 0/2: len(L['xs']) == 3 (3 recompiles in "
                                           "the last 10 s, more than 2)"));
  CHECK(fired[0].thread == 3);
  CHECK(fired[0].values[0].second == 3);
  CHECK(observe(t, {instant(&kRecompile1, 3000)}).empty());  // still above: once
  // 20 s later the storm left the window: one alone re-arms, then a new storm fires again.
  CHECK(observe(t, {instant(&kRecompile1, 25'000)}).empty());
  fired = observe(t, {instant(&kRecompile1, 26'000), instant(&kRecompile1, 27'000),
                      instant(&kRecompile1, 28'000)});
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].at_tick == 27'000 * kMs);  // the third within 10 s
}

TEST_CASE("recompile triggers parse, and a wrong one is the config's one error") {
  std::vector<TriggerSpec> out;
  REQUIRE(parse_triggers("slow:request>200ms+recompile>3/60s+recompile", &out).ok());
  REQUIRE(out.size() == 3);
  CHECK(out[1].kind == TriggerSpec::Kind::kRecompile);
  CHECK(out[1].more_than == 3);
  CHECK(out[1].window_ns == 60'000'000'000);
  CHECK(out[2].kind == TriggerSpec::Kind::kRecompile);
  CHECK(out[2].window_ns == 0);
  for (const char* bad : {"recompile>3", "recompile>/60s", "recompile>x/60s", "recompile>3/1ms",
                          "recompile>-1/60s", "recompiles", "recompile:f"}) {
    CAPTURE(bad);
    const Status s = parse_triggers(bad, &out);
    CHECK_FALSE(s.ok());
    CHECK(testing::contains(s.message(), "recompile>3/60s"));
  }
}

}  // namespace
}  // namespace gpuprobe::flight
