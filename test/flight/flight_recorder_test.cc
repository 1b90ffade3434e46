// The flight recorder end to end, through a Session as a program uses it: a trigger, a request
// and a signal each write one dump — the window before and the time after, in Perfetto and
// Chrome JSON that gpuprobe's readers read back, and dump.json saying what it is; limits hold
// what they should and count it; what is left out of the window is left out.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "flight/dump_directory.h"
#include "gpuprobe/gpuprobe.hpp"
#include "readers/trace_file.h"
#include "support/capture_sink.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using testing::contains;

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("gpuprobe_flight_" + std::to_string(getpid()) + "_" +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::vector<fs::path> dumps_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "dump.json")) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json description(const fs::path& dump) {
  return nlohmann::json::parse(testing::read_file((dump / "dump.json").string()));
}

void request(int ms) {
  GPUPROBE_RANGE("request");
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// The Chrome trace of a dump, in the folder of its own HTA is pointed at.
std::string chrome_file() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return "chrome/" + std::string(host) + "_" + std::to_string(getpid()) + ".pt.trace.json";
}

// Both formats, read back by gpuprobe's readers: the events by name.
std::vector<testing::CapturedEvent> read_dump(const fs::path& dump, const std::string& file) {
  testing::CaptureSink sink;
  REQUIRE(readers::read_trace_file((dump / file).string(), sink).ok());
  return sink.events();
}

std::size_t count_named(const std::vector<testing::CapturedEvent>& events, const std::string& n) {
  return static_cast<std::size_t>(std::count_if(
      events.begin(), events.end(), [&](const testing::CapturedEvent& e) { return e.name == n; }));
}

TEST_CASE("a slow request writes one dump: the window before, the time after, self-described") {
  TempDir dir;
  const std::string config =
      "flight=1,dump=" + dir.path.string() + ",dump_after=300ms,trigger=slow:request>40ms,rank=3";
  Session session(config);
  REQUIRE(session.ok());
  { GPUPROBE_RANGE("too old"); }
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // past the 1 s window
  for (int i = 0; i < 20; ++i) request(1);
  GPUPROBE_COUNTER("queue depth", 7);
  request(60);  // fires
  { GPUPROBE_RANGE("after the trigger"); }
  request(70);  // fires again: within the cooldown, counted, not written
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the dump is written
  std::vector<fs::path> dumps = dumps_in(dir.path);
  REQUIRE(dumps.size() == 1);
  { GPUPROBE_RANGE("long after"); }
  REQUIRE(session.stop().ok());
  dumps = dumps_in(dir.path);
  REQUIRE(dumps.size() == 1);  // nothing is written at stop without a request
  const fs::path dump = dumps[0];
  const std::string name = dump.filename().string();
  CHECK(name.rfind("gpuprobe_dump_20", 0) == 0);
  CHECK(contains(name, "_pid" + std::to_string(getpid()) + "_rank3"));

  for (const std::string& file : {std::string("trace.pftrace"), chrome_file()}) {
    CAPTURE(file);
    const auto events = read_dump(dump, file);
    CHECK(count_named(events, "request") >= 21);
    CHECK(count_named(events, "after the trigger") == 1);
    CHECK(count_named(events, "queue depth") == 1);
    CHECK(count_named(events, "too old") == 0);     // before the window
    CHECK(count_named(events, "long after") == 0);  // after the time after
    const auto marker = std::find_if(events.begin(), events.end(), [](const auto& e) {
      return e.name.rfind("gpuprobe dump: request took", 0) == 0;
    });
    REQUIRE(marker != events.end());
    CHECK(marker->type == EventType::kInstant);
  }

  const nlohmann::json d = description(dump);
  CHECK(d["format"] == "gpuprobe-dump");
  CHECK(d["format_version"] == 1);
  CHECK(d["source"] == "trigger");
  CHECK(d["trigger"] == "slow:request>40ms");
  CHECK(contains(d["reason"].get<std::string>(), "request took"));
  CHECK(d["values"]["duration_ms"].get<double>() >= 60);
  CHECK(d["values"]["threshold_ms"].get<double>() == 40);
  CHECK(d["pid"] == getpid());
  CHECK(d["rank"] == 3);
  CHECK(d["config"] == config);
  CHECK((d["clock"] == "tsc" || d["clock"] == "monotonic"));
  CHECK(d["window"]["before_s"] == 1);
  CHECK(d["window"]["after_s"].get<double>() == Approx(0.3));
  CHECK(d["window"]["after_cut_short"] == false);
  const std::int64_t from = d["window"]["from_ns"], to = d["window"]["to_ns"];
  CHECK(std::abs(to - from - 1'300'000'000) < 1000);  // to the tick conversion's rounding
  REQUIRE(d["threads"].size() >= 1);
  for (const auto& t : d["threads"]) {
    CHECK(t["first_ns"].get<std::int64_t>() >= from - 100'000'000);
    CHECK(t["events"].get<int>() > 0);
  }
  CHECK(d["drops"]["events_dropped"] == 0);
  CHECK(d["files"] == nlohmann::json::array({"trace.pftrace", chrome_file()}));
  CHECK(d["errors"].empty());
  // No partial directory is left behind.
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    CHECK(entry.path().filename().string().front() != '.');
  }
}

TEST_CASE("dump_format=window writes the recorder's bytes; they read back as the Perfetto trace") {
  TempDir dir;
  Session session("flight=5,dump=" + dir.path.string() + ",dump_format=window+perfetto");
  REQUIRE(session.ok());
  for (int i = 0; i < 2000; ++i) {
    GPUPROBE_RANGE("request");
    GPUPROBE_COUNTER("queue depth", i % 5);
  }
  std::string path;
  REQUIRE(gpuprobe::dump("window test", &path).ok());
  REQUIRE(session.stop().ok());
  const std::vector<fs::path> dumps = dumps_in(dir.path);
  REQUIRE(dumps.size() == 1);
  CHECK(description(dumps[0])["files"] ==
        nlohmann::json::array({"window.gpwindow", "trace.pftrace"}));
  const auto window = read_dump(dumps[0], "window.gpwindow");
  const auto perfetto = read_dump(dumps[0], "trace.pftrace");
  CHECK(count_named(window, "request") == 2000);
  CHECK(count_named(window, "queue depth") == 2000);
  CHECK(count_named(window, "gpuprobe dump: window test") == 1);
  REQUIRE(window.size() == perfetto.size());
  // Perfetto's counters are on tracks of the process, not of a thread.
  const auto key = [](const testing::CapturedEvent& e) {
    return std::make_tuple(e.begin_ns, e.end_ns, e.name,
                           e.type == EventType::kCounter ? 0 : e.os_tid, e.value);
  };
  std::vector<decltype(key(window[0]))> a, b;
  for (const auto& e : window) a.push_back(key(e));
  for (const auto& e : perfetto) b.push_back(key(e));
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (differ++ < 3) {
      WARN(std::get<2>(a[i]) << " " << std::get<0>(a[i]) << ".." << std::get<1>(a[i]) << " tid "
                             << std::get<3>(a[i]) << " v " << std::get<4>(a[i]) << " | "
                             << std::get<2>(b[i]) << " " << std::get<0>(b[i]) << ".."
                             << std::get<1>(b[i]) << " tid " << std::get<3>(b[i]) << " v "
                             << std::get<4>(b[i]));
    }
  }
  CHECK(differ == 0);
}

TEST_CASE("gpuprobe::dump() asks from any thread; the hourly cap holds; no recorder is an error") {
  std::string path;
  const Status none = dump("nothing records", &path);
  REQUIRE_FALSE(none.ok());
  CHECK(contains(none.message(), "flight=SECONDS"));

  TempDir dir;
  Session session("flight=5,dump_after=0.1,dump_max_per_hour=1,dump_format=chrome,dump=" +
                  dir.path.string());
  REQUIRE(session.ok());
  request(1);
  std::string first;
  std::thread asker([&] { REQUIRE(dump("operator asked", &first).ok()); });
  asker.join();
  CHECK(contains(first, dir.path.string()));
  // The same moment again: the dump being recorded is the answer.
  std::string again;
  REQUIRE(dump("again", &again).ok());
  CHECK(again == first);
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  REQUIRE(fs::exists(fs::path(first) / "dump.json"));
  const Status capped = dump("one too many", &path);
  REQUIRE_FALSE(capped.ok());
  CHECK(contains(capped.message(), "dump_max_per_hour=1"));
  REQUIRE(session.stop().ok());
  const nlohmann::json d = description(first);
  CHECK(d["source"] == "api");
  CHECK(d["reason"] == "operator asked");
  CHECK(d["files"] == nlohmann::json::array({chrome_file()}));
  CHECK(count_named(read_dump(first, chrome_file()), "request") == 1);
  CHECK_FALSE(dump("after stop", &path).ok());
}

TEST_CASE("with GPU bursts a dump says which parts of its window have GPU activity") {
  // The switches the collector writes with gpu_burst= (there is no GPU here), made by hand.
  const auto recording = [](bool on) {
    counter(kGpuRecordingCounter, on ? 1 : 0, Category::kCuda);
  };
  const auto sleep_ms = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  TempDir dir;
  Session session("flight=1,dump_after=200ms,dump_format=chrome,dump=" + dir.path.string());
  REQUIRE(session.ok());
  recording(true);
  sleep_ms(100);
  recording(false);  // the last switch before the window: it starts off
  sleep_ms(1700);
  recording(true);
  sleep_ms(100);
  recording(false);
  sleep_ms(200);
  recording(true);  // still on when the window ends
  sleep_ms(100);
  std::string path;
  REQUIRE(dump("look", &path).ok());
  sleep_ms(900);
  REQUIRE(session.stop().ok());
  const nlohmann::json d = description(path);
  const nlohmann::json& gpu = d["gpu_recording"];
  CAPTURE(gpu.dump());
  REQUIRE(gpu["sampled"] == true);
  REQUIRE(gpu["recorded"].size() == 2);
  CHECK(gpu["recorded"][1]["to_ns"] == d["window"]["to_ns"]);
  const double seconds = gpu["recorded_s"];
  CHECK(seconds > 0.35);  // 0.1 s, then 0.1 s before the moment and the 0.2 s after it
  CHECK(seconds < 0.5);
  // The counter starts with the window, at the value the switch before it left.
  const auto events = read_dump(path, chrome_file());
  std::vector<double> values;
  for (const auto& e : events) {
    if (e.name == kGpuRecordingCounter) values.push_back(e.value);
  }
  CHECK(values == std::vector<double>{0, 1, 0, 1});
}

TEST_CASE("without GPU bursts a dump says its GPU activity is not sampled") {
  TempDir dir;
  Session session("flight=1,dump_after=0.1,dump_format=chrome,dump=" + dir.path.string());
  REQUIRE(session.ok());
  std::string path;
  REQUIRE(dump("look", &path).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  REQUIRE(session.stop().ok());
  CHECK(description(path)["gpu_recording"] == nlohmann::json{{"sampled", false}});
}

TEST_CASE("a dump asked for just before stop is written at stop, its time after cut short") {
  TempDir dir;
  Session session("flight=5,dump_after=30s,dump=" + dir.path.string());
  REQUIRE(session.ok());
  request(1);
  std::string path;
  REQUIRE(dump("shutting down", &path).ok());
  REQUIRE(session.stop().ok());  // does not wait the 30 s
  REQUIRE(fs::exists(fs::path(path) / "dump.json"));
  CHECK(description(path)["window"]["after_cut_short"] == true);
  CHECK(count_named(read_dump(path, "trace.pftrace"), "request") == 1);
}

// Issue 48, item 11: a reason from POST /dump or gpuprobe.dump() went raw to the host's stderr
// ("dump written: PATH (REASON)"), into dump.json, and from there into `gpuprobe report`.
TEST_CASE(
    "a dump's reason is printable text of bounded length on stderr, in dump.json, in report") {
  const std::string evil =
      "\x1b]0;owned\x07\x1b[2J\r\ngpuprobe: dump written: /etc/passwd\xff" + std::string(1000, 'x');
  const auto printable = [](const std::string& text) {
    return std::all_of(text.begin(), text.end(), [](char c) {
      const auto b = static_cast<unsigned char>(c);
      return b == '\n' || (b >= 0x20 && b != 0x7f);
    });
  };
  TempDir dir;
  const fs::path err = dir.path / "stderr.txt";
  std::fflush(stderr);
  const int saved = dup(2);
  std::FILE* capture = std::fopen(err.c_str(), "w");
  REQUIRE(capture != nullptr);
  dup2(fileno(capture), 2);
  std::string path;
  {
    Session session("flight=5,dump_after=0.1,dump_format=chrome,dump=" +
                    (dir.path / "dumps").string());
    REQUIRE(session.ok());
    request(1);
    CHECK(dump(evil, &path).ok());
    REQUIRE(session.stop().ok());
  }
  std::fflush(stderr);
  dup2(saved, 2);
  ::close(saved);
  std::fclose(capture);
  REQUIRE(fs::exists(fs::path(path) / "dump.json"));
  const std::string printed = testing::read_file(err.string());
  CAPTURE(printed);
  CHECK(contains(printed, "dump written: " + path + " (\\x1b]0;owned\\x07\\x1b[2J"));
  CHECK(printable(printed));
  CHECK_FALSE(contains(printed, "\ngpuprobe: dump written: /etc/passwd"));
  const std::string reason = description(path)["reason"];
  CHECK(reason.size() <= 200);
  CHECK(printable(reason));
  CHECK(reason.rfind(
            "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0agpuprobe: dump written: /etc/passwd\\xffxx", 0) ==
        0);
#ifdef GPUPROBE_CLI
  // A dump directory may come from anywhere: one whose dump.json carries the raw sequences.
  nlohmann::json forged = description(path);
  forged["reason"] = "\x1b]0;owned\x07\x1b[2J\r\ngpuprobe: all is well";
  forged["host"] = "\x1b[31mred";
  std::ofstream(fs::path(path) / "dump.json") << forged.dump();
  const fs::path out = dir.path / "report.txt";
  const std::string command =
      std::string(GPUPROBE_CLI) + " report '" + path + "' > '" + out.string() + "' 2>&1";
  CHECK(std::system(command.c_str()) == 0);
  const std::string report = testing::read_file(out.string());
  CAPTURE(report);
  CHECK(contains(report, "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0agpuprobe: all is well"));
  CHECK(contains(report, "\\x1b[31mred"));
  CHECK(printable(report));
#endif
}

TEST_CASE("trigger=signal: SIGUSR1 writes a dump; the handler goes with the session") {
  TempDir dir;
  {
    Session session("flight=5,dump_after=0.1,trigger=signal:SIGUSR1,dump=" + dir.path.string());
    REQUIRE(session.ok());
    request(1);
    REQUIRE(raise(SIGUSR1) == 0);  // the process goes on: the handler is gpuprobe's
    for (int i = 0; i < 40 && dumps_in(dir.path).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(session.stop().ok());
  }
  const std::vector<fs::path> dumps = dumps_in(dir.path);
  REQUIRE(dumps.size() == 1);
  CHECK(description(dumps[0])["source"] == "signal");
  struct sigaction now {};
  sigaction(SIGUSR1, nullptr, &now);
  CHECK(now.sa_handler == SIG_DFL);
}

TEST_CASE("flight_mb bounds the memory; what it lets go is counted in the metrics") {
  TempDir dir;
  const fs::path metrics = dir.path / "m.prom";
  Session session("flight=60,flight_mb=1,dump=" + (dir.path / "d").string() +
                  ",metrics_file=" + metrics.string());
  REQUIRE(session.ok());
  for (int i = 0; i < 400'000; ++i) {
    GPUPROBE_RANGE("tiny");
    if (i % 20'000 == 0) session.flush();
  }
  REQUIRE(session.stop().ok());
  const std::string text = testing::read_file(metrics.string());
  CHECK(testing::has_line(text, "gpuprobe_dumps_written_total 0"));
  CHECK(contains(text, "gpuprobe_flight_events_overwritten_total{reason=\"memory\"} "));
  CHECK_FALSE(
      testing::has_line(text, "gpuprobe_flight_events_overwritten_total{reason=\"memory\"} 0"));
  const std::string gauge = "\ngpuprobe_memory_bytes{part=\"flight\"} ";
  const auto at = text.find(gauge);
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(text.substr(at + gauge.size())) <= (1 << 20) + 64 * 1024);
}

}  // namespace
}  // namespace gpuprobe
