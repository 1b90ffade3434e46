// The running / waiting / blocked split of a span from sched='s counters, and what ran while a
// thread was blocked, on traces whose answers are known exactly.
#include "analysis/cpu_state.h"

#include <string>

#include "analysis/report_trace.h"
#include "formats/sched_counters.h"

namespace gpuprobe::test {
namespace {

namespace sc = formats::sched_counters;

struct SchedTrace : Trace {
  std::deque<std::string> names;
  std::deque<CallSite> sites;
  // Thread `tid`'s totals at `at`: running and waiting nanoseconds since it began.
  void sample(std::int64_t tid, std::int64_t at, std::int64_t running, std::int64_t waiting) {
    for (const auto& [kind, value] : {std::pair{sc::kRunning, running}, {sc::kWaiting, waiting}}) {
      names.push_back(sc::name(kind, tid));
      sites.push_back(CallSite{names.back().c_str(), "", "", 0, 0, Category::kApp});
      events.push_back(Event{EventType::kCounter, 0, &sites.back(), static_cast<std::uint64_t>(at),
                             static_cast<std::uint64_t>(at), static_cast<double>(value)});
    }
  }
};

constexpr CallSite kHold{"hold lock", "", "", 0, 0, Category::kApp};

TEST_CASE("a request blocked on a lock another thread's range holds") {
  SchedTrace t;
  t.threads.resize(2);
  t.threads[0].os_tid = 100;
  t.threads[1].os_tid = 200;
  t.threads[1].name = "holder";
  // 100 requests of 2 ms, all on a CPU; request 50 blocks 30 ms more, and 10 ms of its 2 waited
  // for a CPU. Thread 100 is sampled every millisecond; thread 200 holds the lock meanwhile
  // (sleeping: never on a CPU).
  std::int64_t at = 0, running = 0, waiting = 0;
  for (int i = 0; i < 100; ++i) {
    const bool slow = i == 50;
    const std::int64_t length = (slow ? 42 : 2) * kMs;
    t.range(kRequest, at, at + length);
    for (std::int64_t ms = 0; ms < length / kMs; ++ms) {
      t.sample(100, at + ms * kMs, running, waiting);
      if (!slow || ms < 2) {
        running += kMs;
      } else if (ms < 12) {
        waiting += kMs;
      }  // else blocked
    }
    if (slow) {
      Event e{EventType::kRange,
              1,
              &kHold,
              static_cast<std::uint64_t>(at + 12 * kMs),
              static_cast<std::uint64_t>(at + 42 * kMs),
              0.0};
      t.events.push_back(e);
      t.sample(200, at, 5 * kMs, 0);
      t.sample(200, at + 42 * kMs, 5 * kMs, 0);
    }
    at += length;
    t.sample(100, at, running, waiting);
  }
  const analysis::ReportResult& r = t.run();
  REQUIRE(!r.jitter.outliers.empty());
  const analysis::Outlier& o = r.jitter.outliers[0];
  CHECK(o.duration_ns == 42 * kMs);
  std::map<std::string, const analysis::CauseOverlap*> causes;
  for (const auto& c : o.causes) causes[c.cause] = &c;
  REQUIRE(causes.count("blocked") == 1);
  CHECK(causes["blocked"]->overlap_ns == 30 * kMs);
  CHECK(causes["blocked"]->detail == "while \"hold lock\" ran on holder (30.0 ms of it)");
  REQUIRE(causes.count("waiting for a CPU") == 1);
  CHECK(causes["waiting for a CPU"]->overlap_ns == 10 * kMs);
  CHECK(causes.count("CPU gap") == 0);  // no children: no gap; and nothing else to name
}

TEST_CASE("without samples around it, a span's split is unknown and nothing is claimed") {
  SchedTrace t;
  t.threads[0].os_tid = 100;
  for (int i = 0; i < 100; ++i)
    t.range(kRequest, i * 2 * kMs, i * 2 * kMs + (i == 50 ? 9 : 1) * kMs);
  t.sample(100, 150 * kMs, kMs, 0);  // only after the slow one
  const analysis::ReportResult& r = t.run();
  REQUIRE(!r.jitter.outliers.empty());
  for (const auto& c : r.jitter.outliers[0].causes) {
    CHECK(c.cause != "blocked");
    CHECK(c.cause != "waiting for a CPU");
  }
}

TEST_CASE("the counter names carry the thread; others are not sched counters") {
  std::int64_t tid = 0;
  CHECK(sc::parse("sched running ns (tid 4242)", &tid) == 1);
  CHECK(tid == 4242);
  CHECK(sc::parse("sched waiting ns (tid 7)", &tid) == 2);
  CHECK(sc::parse("sched waiting ns (tid 7) extra", &tid) == 0);
  CHECK(sc::parse("sched running ns (tid -1)", &tid) == 0);
  CHECK(sc::parse("cuda allocated bytes", &tid) == 0);
}

}  // namespace
}  // namespace gpuprobe::test
