// fork() while gpuprobe records: each child must run its ranges, threads and exit without a
// deadlock (alarm() turns a hang into a failed child), never touch the parent's outputs, and
// may record a session of its own; the parent's trace stays one whole document. (Not built
// under the sanitizers, whose runtimes do not support fork() with threads running.)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

// Waits for `child` and returns its exit status, or -signal if a signal ended it.
int wait_for(pid_t child) {
  int status = 0;
  if (waitpid(child, &status, 0) != child) return -1000;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST_CASE("children forked while threads record run ranges and threads and exit cleanly") {
  const std::string path =
      (fs::temp_directory_path() / ("fork_" + std::to_string(getpid()) + ".json")).string();
  // Removed however the test ends: with slow forks (a loaded machine) the busy threads below
  // record for long, and files of gigabytes were left behind.
  struct RemoveAtEnd {
    std::string path;
    ~RemoveAtEnd() {
      std::error_code ec;
      fs::remove(path, ec);
    }
  } remove_at_end{path};
  Session session("chrome=" + path + ",flush_ms=1");
  REQUIRE(session.ok());
  // Busy recorders, and threads coming and going, so that the registry's and the name table's
  // locks are taken all the time someone forks.
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int t = 0; t < 3; ++t) {
    busy.emplace_back([&, t] {
      for (int round = 0; !stop.load(); ++round) {
        if (round % 8 == 0) {
          std::thread([t] { ScopedRange r("short-lived " + std::to_string(t)); }).join();
        }
        for (int i = 0; i < 100; ++i) {
          ScopedRange r("busy " + std::to_string(i % 7));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    });
  }
  int clean = 0;
  for (int c = 0; c < 30; ++c) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      alarm(60);  // a deadlock ends the child with SIGALRM (generous: forks are slow under ASan)
      { GPUPROBE_RANGE("child range"); }
      std::thread([] { ScopedRange r("child thread range"); }).join();
      // The parent's session is dead here: stopping it returns at once and writes nothing.
      const bool stopped = session.stop().ok();
      std::exit(stopped ? 0 : 3);  // static destructors and atexit handlers run
    }
    clean += wait_for(child) == 0;
  }
  stop = true;
  for (std::thread& t : busy) t.join();
  REQUIRE(session.stop().ok());
  CHECK(clean == 30);

  // One whole document, the parent's: the children wrote and renamed nothing.
  const nlohmann::json doc = nlohmann::json::parse(testing::read_file(path));
  bool child_events = false;
  for (const auto& e : doc["traceEvents"]) {
    const std::string name = e.value("name", "");
    child_events |= name == "child range" || name == "child thread range";
  }
  CHECK_FALSE(child_events);
  CHECK(doc["gpuprobe"]["events_written"].get<long long>() > 0);
}

TEST_CASE("a forked child can record a session of its own") {
  auto parent_sink = std::make_shared<testing::CaptureSink>();
  Session session("", {parent_sink});
  REQUIRE(session.ok());
  { GPUPROBE_RANGE("parent before fork"); }
  const std::string path =
      (fs::temp_directory_path() / ("fork_child_" + std::to_string(getpid()) + ".json")).string();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(60);
    int rc = 0;
    {
      Session own("chrome=" + path);
      if (!own.ok()) rc = 4;
      { GPUPROBE_RANGE("child's own range"); }
      if (!own.stop().ok()) rc = 5;
    }
    std::_Exit(rc);  // no static destructors: the child ends as quickly as it can
  }
  REQUIRE(wait_for(child) == 0);
  { GPUPROBE_RANGE("parent after fork"); }
  REQUIRE(session.stop().ok());
  CHECK(parent_sink->named("parent before fork").size() == 1);
  CHECK(parent_sink->named("parent after fork").size() == 1);
  CHECK(parent_sink->named("child's own range").empty());
  const nlohmann::json doc = nlohmann::json::parse(testing::read_file(path));
  int own = 0;
  for (const auto& e : doc["traceEvents"]) own += e.value("name", "") == "child's own range";
  CHECK(own == 1);
  fs::remove(path);
}

}  // namespace
}  // namespace gpuprobe
