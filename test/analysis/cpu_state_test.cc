// The running / waiting / blocked split of a span from sched='s counters, and what ran while a
// thread was blocked, on traces whose answers are known exactly.
#include "analysis/cpu_state.h"

#include <string>

#include "analysis/report_trace.h"
#include "analysis/sched_series.h"
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
  CHECK(causes["blocked"]->detail ==
        "while \"hold lock\" was open, off a CPU, on holder (30.0 ms of it)");
  CHECK(o.blocked_behind.range == "hold lock");
  CHECK(o.blocked_behind.on_cpu_ns == 0);
  CHECK(o.blocked_behind.other_waiters == 0);
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

TEST_CASE("a run-queue delay the kernel adds when the thread gets its CPU back is placed back") {
  // Runnable but off a CPU from 10 to 30 ms: the counters stand still (the sampler records the
  // old totals at its read before the change), and at 31 ms both jump: 20 ms waited, 1 ms ran.
  analysis::SchedSeries s;
  const auto sample = [&](std::int64_t at, std::int64_t running, std::int64_t waiting) {
    s.add_running(at, static_cast<double>(running));
    s.add_waiting(at, static_cast<double>(waiting));
  };
  sample(0, 0, 0);
  sample(10 * kMs, 10 * kMs, 0);
  sample(30 * kMs, 10 * kMs, 0);
  sample(31 * kMs, 11 * kMs, 20 * kMs);
  s.finish();
  CHECK(s.waiting(10 * kMs, 30 * kMs) == Approx(20.0 * kMs));
  CHECK(s.running(10 * kMs, 30 * kMs) == Approx(0.0));
  CHECK(s.running(30 * kMs, 31 * kMs) == Approx(1.0 * kMs));
  // Not into a period it ran in: 25 ms seen after 10 ms quiet (samples that disagree) are
  // placed back over the 11 ms since it last ran, the rest left at the sample that showed it.
  analysis::SchedSeries t;
  t.add_running(0, 0);
  t.add_waiting(0, 0);
  t.add_running(10 * kMs, 10.0 * kMs);
  t.add_waiting(10 * kMs, 0);
  t.add_running(20 * kMs, 10.0 * kMs);
  t.add_waiting(20 * kMs, 0);
  t.add_running(21 * kMs, 10.0 * kMs);
  t.add_waiting(21 * kMs, 25.0 * kMs);
  t.finish();
  CHECK(t.waiting(0, 10 * kMs) == Approx(0.0));
  CHECK(t.waiting(10 * kMs, 20 * kMs) == Approx(10.0 * kMs));
  CHECK(t.waiting(0, 22 * kMs) == Approx(25.0 * kMs));
}

TEST_CASE("a slow request that was runnable all along is waiting, not blocked") {
  SchedTrace t;
  t.threads[0].os_tid = 100;
  // 100 requests of 2 ms on a CPU, sampled every ms; request 50 is runnable but off a CPU for
  // its first 20 ms (the counters stand still) and then runs its 2 ms.
  std::int64_t at = 0, running = 0, waiting = 0;
  for (int i = 0; i < 100; ++i) {
    const bool slow = i == 50;
    t.range(kRequest, at, at + (slow ? 22 : 2) * kMs);
    t.sample(100, at, running, waiting);
    if (slow) {
      t.sample(100, at + 19 * kMs, running, waiting);  // the read before the change
      at += 20 * kMs;
      waiting += 20 * kMs;
    }
    for (int ms = 1; ms <= 2; ++ms) {
      running += kMs;
      t.sample(100, at + ms * kMs, running, waiting);
    }
    at += 2 * kMs;
  }
  const analysis::ReportResult& r = t.run();
  REQUIRE(!r.jitter.outliers.empty());
  std::map<std::string, std::int64_t> causes;
  for (const auto& c : r.jitter.outliers[0].causes) causes[c.cause] = c.overlap_ns;
  CHECK(causes["waiting for a CPU"] == 20 * kMs);
  CHECK(causes.count("blocked") == 0);
}

TEST_CASE("in a convoy the holder is named, not another waiter, and the waiters are counted") {
  SchedTrace t;
  t.threads.resize(6);
  for (std::uint32_t i = 0; i < 6; ++i) {
    t.threads[i].os_tid = 100 + i;
    t.threads[i].name = i == 5 ? "holder" : "worker " + std::to_string(i);
  }
  // Workers 0-4 serve 150 requests of 2 ms each, on a CPU; at 200 ms worker 0..3 queue for 30 ms
  // behind "hold" on the holder (asleep with the lock, from 195 ms), each request overlapping
  // the others' more than the holder's.
  constexpr CallSite kHoldRange{"hold", "", "", 0, 0, Category::kApp};
  t.range(kHoldRange, 195 * kMs, 230 * kMs, 5);
  for (std::uint32_t w = 0; w < 5; ++w) {
    std::int64_t at = 0, running = 0;
    for (int i = 0; i < 150; ++i) {
      const bool slow = w < 4 && at == 200 * kMs;
      const std::int64_t length = (slow ? 32 : 2) * kMs;
      t.range(kRequest, at, at + length - w * 10 * kUs, w);
      t.sample(100 + w, at, running, 0);
      if (slow) t.sample(100 + w, at + 30 * kMs, running, 0);
      running += 2 * kMs;
      at += length;
      t.sample(100 + w, at, running, 0);
    }
  }
  t.sample(105, 0, 0, 0);
  t.sample(105, 400 * kMs, kMs, 0);
  const analysis::ReportResult& r = t.run();
  REQUIRE(r.jitter.outliers.size() >= 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const analysis::Outlier& o = r.jitter.outliers[i];
    CHECK(o.blocked_behind.range == "hold");
    CHECK(o.blocked_behind.thread == "holder");
    CHECK(o.blocked_behind.other_waiters == 3);
    std::string detail;
    for (const auto& c : o.causes) {
      if (c.cause == "blocked") detail = c.detail;
    }
    CHECK(detail.find("waiting behind 3 other waiters") != std::string::npos);
    CHECK(detail.find("\"request\"") == std::string::npos);
  }
}

TEST_CASE("past the last sampling of all threads nothing is known") {
  SchedTrace t;
  t.threads[0].os_tid = 100;
  for (int i = 0; i < 100; ++i)
    t.range(kRequest, i * 2 * kMs, i * 2 * kMs + (i == 99 ? 9 : 1) * kMs);
  t.sample(100, 0, 0, 0);
  t.sample(100, 199 * kMs, 100 * kMs, 0);  // before the slow one ends
  const analysis::ReportResult& r = t.run();
  REQUIRE(!r.jitter.outliers.empty());
  for (const auto& c : r.jitter.outliers[0].causes) CHECK(c.cause != "blocked");
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
