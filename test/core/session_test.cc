#include "gpuprobe/session.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/categories.h"
#include "core/thread_registry.h"
#include "formats/sched_counters.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

using testing::CaptureSink;

// After 2^30 - 1 sessions the epochs start again. A thread idle since the session that last had
// an epoch still holds that session's ring; it must get a ring of its own, not write into the
// stale one (which lost its ranges uncounted and showed two threads as one).
TEST_CASE("a thread idle since an earlier session with the same epoch records into its own ring") {
  std::mutex mu;
  std::condition_variable cv;
  int phase = 0;  // 0: record once; 1: record again; 2: done
  const auto wait_for = [&](int p) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return phase >= p; });
  };
  const auto advance = [&](int p) {
    std::lock_guard<std::mutex> lock(mu);
    phase = p;
    cv.notify_all();
  };
  std::int64_t idle_tid = 0;
  std::mutex recorded_mu;
  bool recorded_first = false;
  std::condition_variable recorded_cv;

  core::set_last_epoch_for_testing(detail::kMaxEpoch - 1);  // the next session: the last epoch
  auto first = std::make_shared<CaptureSink>();
  Session a("", {first});
  REQUIRE(a.ok());
  std::thread idle([&] {
    idle_tid = static_cast<std::int64_t>(gettid());
    { GPUPROBE_RANGE("idle thread, first session"); }
    {
      std::lock_guard<std::mutex> lock(recorded_mu);
      recorded_first = true;
      recorded_cv.notify_all();
    }
    wait_for(1);
    for (int i = 0; i < 1000; ++i) {
      GPUPROBE_RANGE("idle thread, after the wrap");
    }
    advance(2);
  });
  {
    std::unique_lock<std::mutex> lock(recorded_mu);
    recorded_cv.wait(lock, [&] { return recorded_first; });
  }
  REQUIRE(a.stop().ok());
  REQUIRE(first->named("idle thread, first session").size() == 1);

  // The epochs wrap around to the one session `a` had.
  core::set_last_epoch_for_testing(detail::kMaxEpoch - 1);
  auto second = std::make_shared<CaptureSink>();
  Session b("", {second});
  REQUIRE(b.ok());
  for (int i = 0; i < 1000; ++i) {
    GPUPROBE_RANGE("main thread, after the wrap");
  }
  advance(1);
  wait_for(2);
  idle.join();
  REQUIRE(b.stop().ok());
  const auto idle_ranges = second->named("idle thread, after the wrap");
  const auto main_ranges = second->named("main thread, after the wrap");
  CHECK(idle_ranges.size() == 1000);
  CHECK(main_ranges.size() == 1000);
  for (const auto& e : idle_ranges) CHECK(e.os_tid == idle_tid);
  for (const auto& e : main_ranges) CHECK(e.os_tid == static_cast<std::int64_t>(gettid()));
  const Stats stats = second->final_stats();
  CHECK(stats.dropped == 0);
  std::uint64_t written = 0;
  for (const ThreadInfo& t : stats.threads) written += t.written;
  CHECK(written == 2000);
  CHECK(second->named("idle thread, first session").empty());
  core::set_last_epoch_for_testing(0);
}

volatile sig_atomic_t g_handler_ranges = 0;

void record_in_handler(int) {
  GPUPROBE_RANGE("in signal handler");
  g_handler_ranges = g_handler_ranges + 1;
}

// Ranges recorded by a signal handler that interrupts ranges on the same thread: every record
// is whole (none half-written or overwritten), and what is not recorded is counted.
TEST_CASE("ranges recorded inside a signal handler never corrupt the interrupted thread's ring") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("ring=1048576", {sink});
  REQUIRE(session.ok());
  struct sigaction sa = {};
  sa.sa_handler = &record_in_handler;
  sigemptyset(&sa.sa_mask);
  struct sigaction old = {};
  REQUIRE(sigaction(SIGALRM, &sa, &old) == 0);
  g_handler_ranges = 0;
  { GPUPROBE_RANGE("first, so the thread has its ring"); }
  itimerval every{{0, 20}, {0, 20}};  // every 20 us
  REQUIRE(setitimer(ITIMER_REAL, &every, nullptr) == 0);
  // Fewer ranges than the ring holds, so that every drop is a handler's collision.
  std::uint64_t produced = 0;
  while (produced < 600000) {
    GPUPROBE_RANGE("interrupted");
    ++produced;
  }
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &old, nullptr);
  REQUIRE(session.stop().ok());
  const auto main_ranges = sink->named("interrupted");
  const auto handler_ranges = sink->named("in signal handler");
  for (const auto& e : main_ranges) CHECK(e.end_ns >= e.begin_ns);
  for (const auto& e : handler_ranges) CHECK(e.end_ns >= e.begin_ns);
  const Stats stats = sink->final_stats();
  INFO(produced << " ranges, " << g_handler_ranges << " in the handler, " << stats.dropped
                << " dropped");
  CHECK(g_handler_ranges > 50);
  CHECK(main_ranges.size() + handler_ranges.size() + stats.dropped ==
        produced + static_cast<std::uint64_t>(g_handler_ranges));
  CHECK(main_ranges.size() == produced);  // the interrupted ranges are all whole
  CHECK(stats.dropped < static_cast<std::uint64_t>(g_handler_ranges));
}

// stop() must not wait behind a thread that calls flush() in a loop (mutexes are not fair).
TEST_CASE("stop() is not starved by a thread flushing in a loop") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("", {sink});
  REQUIRE(session.ok());
  std::atomic<bool> done{false};
  std::thread flusher([&] {
    while (!done.load()) {
      { GPUPROBE_RANGE("flushed"); }
      session.flush();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(session.stop().ok());
  const auto waited = std::chrono::steady_clock::now() - t0;
  done = true;
  flusher.join();
  CHECK(waited < std::chrono::seconds(2));
  CHECK_FALSE(sink->named("flushed").empty());
}

TEST_CASE("A session records ranges, instants and counters with their sites") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("flush_ms=10000", {sink});  // one drain, at stop
  REQUIRE(session.ok());
  REQUIRE(session.running());
  REQUIRE(sink->opened());
  {
    GPUPROBE_RANGE("outer");
    {
      ScopedRange inner(std::string("inner_") + "dynamic");
      GPUPROBE_INSTANT("mark");
      instant("dynamic_mark");
      counter("depth", 12.5);
      GPUPROBE_COUNTER("static_depth", -3.0);
    }
  }
  REQUIRE(session.stop().ok());
  REQUIRE_FALSE(session.running());
  REQUIRE(sink->closed());

  const auto outer = sink->named("outer");
  const auto inner = sink->named("inner_dynamic");
  REQUIRE(outer.size() == 1);
  REQUIRE(inner.size() == 1);
  REQUIRE(outer[0].type == EventType::kRange);
  REQUIRE(outer[0].begin_ns <= inner[0].begin_ns);
  REQUIRE(inner[0].end_ns <= outer[0].end_ns);
  REQUIRE(sink->named("mark").at(0).type == EventType::kInstant);
  REQUIRE(sink->named("dynamic_mark").at(0).type == EventType::kInstant);
  REQUIRE(sink->named("depth").at(0).type == EventType::kCounter);
  REQUIRE(sink->named("depth").at(0).value == 12.5);
  REQUIRE(sink->named("static_depth").at(0).value == -3.0);
  const Stats stats = session.stats();
  REQUIRE(stats.written == 6);
  REQUIRE(stats.dropped == 0);
  REQUIRE(stats.threads.size() == 1);
  REQUIRE(stats.threads[0].peak_fill == 6);  // all six waited in the ring for the final drain
  REQUIRE(sink->final_stats().written == 6);
}

TEST_CASE("GPUPROBE_FUNCTION is named after the enclosing function") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("", {sink});
  [] { GPUPROBE_FUNCTION(); }();
  struct Local {
    static void named_function() { GPUPROBE_FUNCTION(); }
  };
  Local::named_function();
  REQUIRE(session.stop().ok());
  REQUIRE(sink->named("named_function").size() == 1);
  REQUIRE(sink->named("operator()").size() == 1);
}

TEST_CASE("Nothing records without a session, or after it stopped") {
  { GPUPROBE_RANGE("before"); }
  auto sink = std::make_shared<CaptureSink>();
  Session session("", {sink});
  { GPUPROBE_RANGE("during"); }
  // A range open across stop() is not recorded, in this session or the next.
  std::optional<ScopedRange> across;
  across.emplace(std::string_view("across"));
  REQUIRE(session.stop().ok());
  across.reset();
  { GPUPROBE_RANGE("after"); }
  auto sink2 = std::make_shared<CaptureSink>();
  Session next("", {sink2});
  REQUIRE(next.stop().ok());
  REQUIRE(sink->events().size() == 1);
  REQUIRE(sink->events()[0].name == "during");
  REQUIRE(sink2->events().empty());
}

TEST_CASE("Only one session records at a time") {
  REQUIRE(recording_session().id == 0);
  auto sink = std::make_shared<CaptureSink>();
  Session first("", {sink});
  REQUIRE(first.ok());
  const RecordingSession recording = recording_session();
  REQUIRE(recording.id != 0);
  REQUIRE_FALSE(recording.from_environment);
  REQUIRE(describe(recording) == "a session the program started, writing custom");
  Session second("");
  REQUIRE_FALSE(second.ok());
  REQUIRE_FALSE(second.running());
  // It names the session recording, which records the program's ranges meanwhile.
  REQUIRE(second.error().find("already recording (a session the program started, writing "
                              "custom)") != std::string::npos);
  { GPUPROBE_RANGE("while the second exists"); }
  REQUIRE_FALSE(second.stop().ok());
  REQUIRE(first.running());  // the second's stop() stopped nothing
  flush_recording_session(recording.id);
  REQUIRE(recording_session_stats(recording.id).written == 1);
  REQUIRE(recording_session_stats(recording.id + 1).written == 0);  // not that session
  REQUIRE(first.stop().ok());
  REQUIRE(sink->events().size() == 1);
  REQUIRE(sink->events()[0].name == "while the second exists");
  REQUIRE(recording_session().id == 0);
  REQUIRE(describe(recording_session()).empty());
  Session third("");
  REQUIRE(third.ok());
  REQUIRE(recording_session().id > recording.id);  // ids are never reused
}

TEST_CASE("Session::check finds config mistakes and starts nothing") {
  REQUIRE(Session::check("chrome=a.json,perfetto=b.pftrace,ring=1024").ok());
  REQUIRE(Session::check("bogus=1").message().find("unknown config key 'bogus'") !=
          std::string::npos);
  REQUIRE(Session::check("ring=lots").message().find("'ring'") != std::string::npos);
  REQUIRE(Session::check("chrome=same.json,chrome=./same.json").message().find("one file") !=
          std::string::npos);
  REQUIRE(recording_session().id == 0);
  REQUIRE_FALSE(std::filesystem::exists("a.json"));
}

TEST_CASE("A bad config string starts nothing and says why") {
  Session session("chrome=x.json,ring=lots");
  REQUIRE_FALSE(session.ok());
  REQUIRE_FALSE(session.running());
  REQUIRE(session.error().find("'ring'") != std::string::npos);
  REQUIRE_FALSE(session.stop().ok());
  // The failed session did not claim the process: another can start.
  Session good("");
  REQUIRE(good.ok());
}

TEST_CASE("Categories switch on and off while a session runs") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("", {sink});
  set_category_enabled(Category::kGc, false);
  REQUIRE_FALSE(category_enabled(Category::kGc));
  { ScopedRange r("gc_off", Category::kGc); }
  { GPUPROBE_RANGE_IN(Category::kGc, "gc_off_static"); }
  set_category_enabled(Category::kGc, true);
  { ScopedRange r("gc_on", Category::kGc); }
  REQUIRE(session.stop().ok());
  REQUIRE(sink->named("gc_off").empty());
  REQUIRE(sink->named("gc_off_static").empty());
  REQUIRE(sink->named("gc_on").size() == 1);
  REQUIRE(sink->named("gc_on")[0].category == Category::kGc);
}

TEST_CASE("The categories key limits what a session records") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("categories=gc", {sink});
  { GPUPROBE_RANGE("app_range"); }
  { ScopedRange r("gc_range", Category::kGc); }
  REQUIRE(session.stop().ok());
  REQUIRE(sink->named("app_range").empty());
  REQUIRE(sink->named("gc_range").size() == 1);
  // The key applied to that session only: the process-wide switches are back.
  REQUIRE(category_enabled(Category::kApp));
  REQUIRE(category_enabled(Category::kStep));
}

TEST_CASE("Thread names come from set_thread_name, else the runtime's, else the OS's") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("", {sink});
  std::thread named([] {
    set_thread_name("named \"worker\"");
    GPUPROBE_RANGE("x");
  });
  named.join();
  std::thread os_named([] {
    pthread_setname_np(pthread_self(), "os-name");
    GPUPROBE_RANGE("y");
  });
  os_named.join();
  // A language runtime's name (Python's threading) goes before the OS name, given before the
  // thread's first event or after it; set_thread_name() still wins over it.
  std::thread runtime_named([] {
    pthread_setname_np(pthread_self(), "inherited");
    detail::set_runtime_thread_name("ThreadPoolExecutor-0_1");
    GPUPROBE_RANGE("z");
  });
  runtime_named.join();
  std::thread renamed([] {
    { GPUPROBE_RANGE("w"); }
    detail::set_runtime_thread_name("pool_2");
  });
  renamed.join();
  std::thread both([] {
    set_thread_name("by the program");
    detail::set_runtime_thread_name("by threading");
    GPUPROBE_RANGE("v");
  });
  both.join();
  REQUIRE(session.stop().ok());
  const Stats stats = session.stats();
  REQUIRE(stats.threads.size() == 5);
  const auto name_of = [&](const char* range) {
    return stats.threads[sink->named(range).at(0).thread].name;
  };
  REQUIRE(name_of("x") == "named \"worker\"");
  REQUIRE(name_of("y") == "os-name");
  REQUIRE(name_of("z") == "ThreadPoolExecutor-0_1");
  REQUIRE(name_of("w") == "pool_2");
  REQUIRE(name_of("v") == "by the program");
  REQUIRE(stats.threads[sink->named("x").at(0).thread].os_tid !=
          stats.threads[sink->named("y").at(0).thread].os_tid);
}

// Interleaved work on one thread (asyncio tasks): each sequence's ranges on a track of its own,
// shown as a thread named with name_track(), and counted in that row.
TEST_CASE("ranges on tracks become rows of their own, named, with their events counted") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("", {sink});
  const std::uint32_t first = new_track(), second = new_track();
  REQUIRE(first != 0);
  REQUIRE(second != first);
  name_track(first, "task one");
  name_track(second, "task two");
  ManualRange a, b;
  a.begin_on_track("one", Category::kApp, first);
  b.begin_on_track("two", Category::kApp, second);
  a.end();  // not nested: fine on tracks of their own
  { GPUPROBE_RANGE("thread itself"); }
  b.end();
  REQUIRE(session.stop().ok());
  const Stats stats = session.stats();
  const testing::CapturedEvent one = sink->named("one").at(0), two = sink->named("two").at(0);
  const testing::CapturedEvent own = sink->named("thread itself").at(0);
  REQUIRE(one.thread != two.thread);
  REQUIRE(one.thread != own.thread);
  CHECK(stats.threads[one.thread].name == "task one");
  CHECK(stats.threads[two.thread].name == "task two");
  CHECK(stats.threads[one.thread].written == 1);
  CHECK(stats.threads[two.thread].written == 1);
  CHECK(stats.threads[own.thread].written == 1);  // the names are not events
  CHECK(one.os_tid != two.os_tid);
  CHECK(one.os_tid > (std::int64_t{1} << 22));  // never a kernel thread id
  CHECK(stats.written == 3);
}

TEST_CASE("A sink that fails is disabled, reported once, and the others go on") {
  class FailingSink : public Sink {
   public:
    Status open(const TraceInfo&) override { return {}; }
    Status write(const EventBatch&) override {
      ++writes;
      return Status::Error("disk on fire");
    }
    Status close(const Stats&, const TimeBase&) override { return {}; }
    int writes = 0;
  };
  class ThrowingSink : public Sink {
   public:
    Status open(const TraceInfo&) override { return {}; }
    Status write(const EventBatch&) override { throw std::runtime_error("boom"); }
    Status close(const Stats&, const TimeBase&) override { return {}; }
  };
  auto failing = std::make_shared<FailingSink>();
  auto throwing = std::make_shared<ThrowingSink>();
  auto good = std::make_shared<CaptureSink>();
  Session session("flush_ms=1", {failing, throwing, good});
  for (int i = 0; i < 3; ++i) {
    { GPUPROBE_RANGE("r"); }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const Status stopped = session.stop();
  REQUIRE_FALSE(stopped.ok());
  REQUIRE(failing->writes == 1);
  REQUIRE(session.error().find("disk on fire") != std::string::npos);
  REQUIRE(session.error().find("boom") != std::string::npos);
  REQUIRE(good->named("r").size() == 3);
}

TEST_CASE("Rings of exited threads are reused, not leaked") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("ring=1024,flush_ms=1", {sink});
  const std::size_t before = core::ThreadRegistry::get().allocated();
  for (int batch = 0; batch < 30; ++batch) {
    for (int i = 0; i < 10; ++i) std::thread([] { GPUPROBE_RANGE("short_lived"); }).join();
    // Far longer than flush_ms: the collector drains and recycles the batch's rings.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(session.stop().ok());
  REQUIRE(sink->named("short_lived").size() == 300);
  // At most a batch's worth of rings is in use at once, so a few dozen serve all 300 threads.
  REQUIRE(core::ThreadRegistry::get().allocated() - before <= 30);
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

using testing::CaptureSink;

TEST_CASE("Steps are contiguous ranges numbered from 0, or from a given number") {
  auto sink = std::make_shared<CaptureSink>();
  Session session("flush_ms=10000", {sink});
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    step();
  }
  step(10);
  std::thread([] { step(); }).join();  // any thread may end a step
  set_category_enabled(Category::kStep, false);
  step();  // not recorded, and does not advance the step clock either
  set_category_enabled(Category::kStep, true);
  REQUIRE(session.stop().ok());
  const auto steps = sink->named("ProfilerStep");
  REQUIRE(steps.size() == 5);
  const double numbers[] = {0, 1, 2, 10, 11};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("step " << i);
    REQUIRE(steps[i].category == Category::kStep);
    REQUIRE(steps[i].value == numbers[i]);
    REQUIRE(steps[i].end_ns >= steps[i].begin_ns);
    if (i > 0) REQUIRE(steps[i].begin_ns == steps[i - 1].end_ns);
  }
  REQUIRE(steps[0].end_ns - steps[0].begin_ns >= 2'000'000);
}

TEST_CASE("sched= records each thread's time on a CPU and waiting for one, as it changes") {
  auto sink = std::make_shared<CaptureSink>();
  std::int64_t sleeper_tid = 0;
  {
    Session session("sched=1ms", {sink});
    std::thread sleeper([&] {
      sleeper_tid = static_cast<std::int64_t>(syscall(SYS_gettid));
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
    });
    // This thread computes meanwhile: its running total rises sample after sample.
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    volatile std::uint64_t spin = 0;
    while (std::chrono::steady_clock::now() < end) spin = spin + 1;
    sleeper.join();
    REQUIRE(session.stop().ok());
  }
  const auto self = static_cast<std::int64_t>(syscall(SYS_gettid));
  std::map<std::int64_t, std::vector<double>> running;
  for (const auto& e : sink->events()) {
    std::int64_t tid = 0;
    if (e.type == EventType::kCounter && formats::sched_counters::parse(e.name.c_str(), &tid) == 1)
      running[tid].push_back(e.value);
  }
  REQUIRE(running.count(self) == 1);
  CHECK(running[self].size() >= 10);  // about one per millisecond it ran
  CHECK(running[self].back() - running[self].front() >= 20e6);
  for (std::size_t i = 1; i < running[self].size(); ++i)
    CHECK(running[self][i] >= running[self][i - 1]);  // totals (recorded when either changed)
  // The sleeper, listed within ten periods of its start, barely ran: few samples.
  if (running.count(sleeper_tid) != 0) CHECK(running[sleeper_tid].size() < 10);
}

}  // namespace
}  // namespace gpuprobe
