#include "sinks/chrome_trace_sink.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(path_), fs::directory_iterator()));
  }

 private:
  fs::path path_;
};

std::string read_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

std::vector<json> events_named(const json& trace, const std::string& name) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

void record_sample_workload() {
  gpuprobe::step();  // ProfilerStep#0: from the session's start to here
  GPUPROBE_RANGE("outer");
  {
    GPUPROBE_RANGE("inner");
    gpuprobe::instant("checkpoint");
    gpuprobe::counter("queue_depth", 12.0);
  }
  std::thread([] {
    gpuprobe::set_thread_name("helper");
    GPUPROBE_RANGE("on_helper");
  }).join();
}

TEST_CASE("The Chrome trace has Kineto's structure and reads back") {
  TempDir dir;
  const std::string path = dir.file("trace.json");
  Session session("chrome=" + path + ",rank=3,world_size=4");
  REQUIRE(session.ok());
  record_sample_workload();
  REQUIRE_FALSE(fs::exists(path));  // only the temporary file exists while recording
  REQUIRE(session.stop().ok());
  REQUIRE(dir.entries() == 1);  // the temporary file is gone

  const std::string text = testing::read_file(path);
  const json trace = json::parse(text);
  REQUIRE(trace["schemaVersion"] == 1);
  REQUIRE(trace["displayTimeUnit"] == "ms");
  REQUIRE(trace["baseTimeNanoseconds"].is_number_integer());
  REQUIRE(trace["distributedInfo"]["rank"] == 3);
  REQUIRE(trace["distributedInfo"]["world_size"] == 4);
  REQUIRE(text.find("\"rank\": 3") != std::string::npos);  // HTA's pattern needs the space
  REQUIRE(trace["traceName"] == path);

  const json outer = events_named(trace, "outer").at(0);
  const json inner = events_named(trace, "inner").at(0);
  REQUIRE(outer["ph"] == "X");
  REQUIRE(outer["cat"] == "user_annotation");
  REQUIRE(outer["pid"] == getpid());
  REQUIRE(outer["tid"].is_number_integer());
  REQUIRE(outer["ts"].get<double>() <= inner["ts"].get<double>());
  REQUIRE(outer["ts"].get<double>() + outer["dur"].get<double>() >=
          inner["ts"].get<double>() + inner["dur"].get<double>());
  REQUIRE(inner["dur"].get<double>() >= 0);

  const json mark = events_named(trace, "checkpoint").at(0);
  REQUIRE(mark["ph"] == "i");
  REQUIRE(mark["s"] == "t");
  const json depth = events_named(trace, "queue_depth").at(0);
  REQUIRE(depth["ph"] == "C");
  REQUIRE(depth["args"]["queue_depth"] == 12.0);

  // Timestamps are microseconds relative to baseTimeNanoseconds: together they give wall time
  // within the last minute.
  const double wall_us =
      trace["baseTimeNanoseconds"].get<double>() / 1000.0 + outer["ts"].get<double>();
  const double now_us =
      std::chrono::duration<double, std::micro>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  REQUIRE(std::abs(now_us - wall_us) < 60e6);

  // Metadata: process name and labels, and a name per thread.
  std::map<std::int64_t, std::string> thread_names;
  std::set<std::string> process_meta;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "thread_name") thread_names[e["tid"].get<std::int64_t>()] = e["args"]["name"];
    if (e["name"] == "process_name" || e["name"] == "process_labels")
      process_meta.insert(e["name"]);
  }
  REQUIRE(process_meta.size() == 2);
  const json helper = events_named(trace, "on_helper").at(0);
  REQUIRE(thread_names.at(helper["tid"].get<std::int64_t>()).find("(helper)") != std::string::npos);
  REQUIRE(thread_names.count(outer["tid"].get<std::int64_t>()) == 1);

  const json step = events_named(trace, "ProfilerStep#0").at(0);
  REQUIRE(step["ph"] == "X");
  REQUIRE(step["cat"] == "user_annotation");
  REQUIRE(step["ts"].get<double>() + step["dur"].get<double>() <=
          outer["ts"].get<double>() + 0.001);

  // Statistics are part of the output.
  const json& stats = trace["gpuprobe"];
  REQUIRE(stats["events_written"] == 6);
  REQUIRE(stats["events_dropped"] == 0);
  REQUIRE(stats["threads"].size() == 2);
  REQUIRE(stats["ring_capacity"] == 32768);
}

TEST_CASE("Drops are written into the trace") {
  TempDir dir;
  const std::string path = dir.file("drops.json");
  Session session("chrome=" + path + ",ring=16,flush_ms=10000");
  for (int i = 0; i < 100; ++i) GPUPROBE_INSTANT("burst");
  REQUIRE(session.stop().ok());
  const json trace = json::parse(testing::read_file(path));
  REQUIRE(trace["gpuprobe"]["events_written"] == 16);
  REQUIRE(trace["gpuprobe"]["events_dropped"] == 84);
  REQUIRE(trace["gpuprobe"]["threads"][0]["dropped"] == 84);
  REQUIRE(trace["gpuprobe"]["threads"][0]["peak_fill"] == 16);  // the ring was full
  REQUIRE(events_named(trace, "burst").size() == 16);
}

TEST_CASE("Names with quotes, control characters and non-ASCII stay valid JSON") {
  TempDir dir;
  const std::string path = dir.file("names.json");
  const std::vector<std::string> names = {"say \"hi\"", "C:\\path\\to", "line\nbreak\x01",
                                          "caf\xC3\xA9 \xF0\x9F\x94\xA5", "tab\there"};
  Session session("chrome=" + path);
  for (const std::string& n : names) ScopedRange r(n);
  gpuprobe::counter("weird \"counter\"", 1.5);
  REQUIRE(session.stop().ok());
  const json trace = json::parse(testing::read_file(path));
  for (const std::string& n : names) {
    INFO(n);
    REQUIRE(events_named(trace, n).size() == 1);
  }
  REQUIRE(events_named(trace, "weird \"counter\"").at(0)["args"]["weird \"counter\""] == 1.5);
}

TEST_CASE("A .json.gz path writes gzip") {
  TempDir dir;
  const std::string path = dir.file("trace.json.gz");
  Session session("chrome=" + path);
  record_sample_workload();
  REQUIRE(session.stop().ok());
  const std::string raw = testing::read_file(path);
  REQUIRE(raw.size() > 2);
  REQUIRE(static_cast<unsigned char>(raw[0]) == 0x1f);
  REQUIRE(static_cast<unsigned char>(raw[1]) == 0x8b);
  const json trace = json::parse(read_gzip(path));
  REQUIRE(events_named(trace, "outer").size() == 1);
}

TEST_CASE("Several chrome outputs at once get the same events") {
  TempDir dir;
  Session session("chrome=" + dir.file("a.json") + ",chrome=" + dir.file("b.json.gz"));
  record_sample_workload();
  REQUIRE(session.stop().ok());
  const json a = json::parse(testing::read_file(dir.file("a.json")));
  const json b = json::parse(read_gzip(dir.file("b.json.gz")));
  REQUIRE(a["traceEvents"].size() == b["traceEvents"].size());
}

TEST_CASE("A directory path writes torch.profiler's <host>_<pid>.<ns>.pt.trace.json layout") {
  TempDir dir;
  const std::string traces = dir.file("run1/traces") + "/";
  Session session("chrome=" + traces);
  REQUIRE(session.ok());
  record_sample_workload();
  REQUIRE(session.stop().ok());
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(traces)) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  const std::string name = files[0].filename().string();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string prefix = std::string(host) + "_" + std::to_string(getpid()) + ".";
  INFO(name);
  REQUIRE(name.rfind(prefix, 0) == 0);
  REQUIRE(name.size() > prefix.size() + 14);
  REQUIRE(name.substr(name.size() - 14) == ".pt.trace.json");
  const std::string stamp = name.substr(prefix.size(), name.size() - prefix.size() - 14);
  REQUIRE(stamp.find_first_not_of("0123456789") == std::string::npos);
  const json trace = json::parse(testing::read_file(files[0].string()));
  REQUIRE(events_named(trace, "outer").size() == 1);
}

TEST_CASE("An unwritable path is one clear error and the program goes on") {
  Session session("chrome=/nonexistent-dir/trace.json");
  REQUIRE_FALSE(session.ok());
  REQUIRE_FALSE(session.running());
  REQUIRE(session.error().find("/nonexistent-dir/trace.json") != std::string::npos);
  REQUIRE(session.error().find("No such file or directory") != std::string::npos);
  { GPUPROBE_RANGE("still_fine"); }  // recording calls are harmless without a session
}

TEST_CASE("A full disk mid-trace is reported, the partial file removed, the program goes on") {
  TempDir dir;
  const std::string path = dir.file("full.json");
  // The child process gets a 64 KiB file-size limit: writes past it fail like a full disk.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{64 * 1024, 64 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    Session session("chrome=" + path + ",ring=1048576");
    for (int i = 0; i < 200000; ++i) {
      GPUPROBE_RANGE("fill_the_disk");
    }
    const Status s = session.stop();
    const bool reported = !s.ok() && s.message().find("File too large") != std::string::npos;
    _exit(reported ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE_FALSE(fs::exists(path));
  REQUIRE(dir.entries() == 0);
}

TEST_CASE("The JSON base time is a whole day, so timestamps stay small") {
  const std::int64_t start = 1'764'500'000'123'456'789;
  const std::int64_t base = sinks::ChromeTraceSink::base_time_ns(start);
  REQUIRE(base <= start);
  REQUIRE(start - base < 86'400'000'000'000);
  REQUIRE(base % 86'400'000'000'000 == 0);
}

}  // namespace
}  // namespace gpuprobe
