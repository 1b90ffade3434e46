// The flight recorder's limits under attack and misuse (issue 48, items 6, 7 and 14): the disk
// cap deletes only dumps this user's gpuprobe wrote, and deletes them without following links;
// the signal trigger honours dump_cooldown and the hourly maximum like every trigger, a refused
// trigger is said at most once a minute and every one is counted; the final metrics count the
// dumps written while the session stopped.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "flight/dump_directory.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::has_line;
using testing::read_file;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe_dumps_XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

// A dump as gpuprobe writes one: its name's pattern and dump.json's format marker.
void make_dump(const fs::path& dir, const std::string& name, std::size_t bytes) {
  fs::create_directories(dir / name / "chrome");
  std::ofstream(dir / name / "dump.json") << "{\n  \"format\": \"gpuprobe-dump\",\n}";
  std::ofstream(dir / name / "chrome" / "t.json") << std::string(bytes, 'x');
}

int count_lines(const std::string& text, const std::string& part) {
  int n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The value of a sample line "NAME VALUE" in a metrics text, or -1.
double sample(const std::string& text, const std::string& name) {
  const std::size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
}

TEST_CASE("6: the disk cap deletes only gpuprobe's own dumps, and no link's target") {
  TempDir dir;
  const std::string a = "gpuprobe_dump_20261201T000001.000Z_h_pid1";
  const std::string b = "gpuprobe_dump_20261201T000002.000Z_h_pid1";
  const std::string keep = "gpuprobe_dump_20261201T000009.000Z_h_pid1";
  make_dump(dir.path, a, 600 << 10);
  make_dump(dir.path, b, 600 << 10);
  make_dump(dir.path, keep, 600 << 10);
  // A user's results that happen to hold a dump.json: the deletion the issue found.
  fs::create_directories(dir.path / "results");
  std::ofstream(dir.path / "results" / "dump.json") << "{\"accuracy\": 0.93}";
  std::ofstream(dir.path / "results" / "weights.bin") << std::string(5 << 20, 'w');
  // Named like a dump, but no gpuprobe dump inside.
  fs::create_directories(dir.path / "gpuprobe_dump_20261201T000000.000Z_fake");
  std::ofstream(dir.path / "gpuprobe_dump_20261201T000000.000Z_fake" / "dump.json") << "{}";
  // A link named like the oldest dump, to a real dump elsewhere, and a link inside a dump to a
  // file outside: neither target is gpuprobe's to delete.
  TempDir elsewhere;
  make_dump(elsewhere.path, a, 10);
  fs::create_directory_symlink(elsewhere.path / a,
                               dir.path / "gpuprobe_dump_20261201T000000.500Z_link");
  const fs::path outside = elsewhere.path / "precious.txt";
  std::ofstream(outside) << "keep me";
  fs::create_symlink(outside, dir.path / a / "chrome" / "link.txt");

  std::uint64_t left = 0;
  CHECK(flight::enforce_disk_cap(dir.path.string(), 1 << 20, keep, &left) == 2);
  CHECK_FALSE(fs::exists(dir.path / a));
  CHECK_FALSE(fs::exists(dir.path / b));
  CHECK(fs::exists(dir.path / keep));
  CHECK(left >= 600u << 10);
  CHECK(fs::file_size(dir.path / "results" / "weights.bin") == 5u << 20);
  CHECK(fs::exists(dir.path / "gpuprobe_dump_20261201T000000.000Z_fake" / "dump.json"));
  CHECK(fs::exists(elsewhere.path / a / "dump.json"));
  CHECK(read_file(outside.string()) == "keep me");

  if (geteuid() == 0) {  // a dump-shaped directory of another user is not this user's either
    make_dump(dir.path, a, 600 << 10);
    for (const auto& e : fs::recursive_directory_iterator(dir.path / a))
      REQUIRE(lchown(e.path().c_str(), 65534, 65534) == 0);
    REQUIRE(lchown((dir.path / a).c_str(), 65534, 65534) == 0);
    CHECK_FALSE(flight::is_own_dump(dir.path.string(), a));
    CHECK(flight::enforce_disk_cap(dir.path.string(), 0, keep, &left) == 0);
    CHECK(fs::exists(dir.path / a / "dump.json"));
  } else {
    WARN("skipped (another user's dump): needs root");
  }
}

TEST_CASE("6: a session's dumps are recognised by its own disk cap") {
  TempDir dir;
  {
    Session session("flight=5,dump_after=0,dump_max_mb=1,dump=" + dir.path.string());
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("request"); }
    std::string first;
    REQUIRE(dump("one", &first).ok());
    for (int i = 0; i < 100 && !fs::exists(fs::path(first) / "dump.json"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(fs::path(first) / "dump.json"));
    CHECK(flight::is_own_dump(dir.path.string(), fs::path(first).filename().string()));
  }
}

TEST_CASE("7: the signal trigger honours dump_cooldown; refusals are counted and said once") {
  TempDir dir;
  const fs::path metrics = dir.path / "m.prom";
  std::string text;
  {
    Session session("flight=5,dump_after=0,dump_cooldown=30s,trigger=signal:SIGUSR2,dump=" +
                    (dir.path / "d").string() + ",metrics_file=" + metrics.string());
    REQUIRE(session.ok());
    // Capture what gpuprobe says on stderr while the signals arrive.
    std::fflush(stderr);
    const int saved = dup(2);
    const fs::path said = dir.path / "stderr.txt";
    std::FILE* to = std::fopen(said.c_str(), "w");
    dup2(fileno(to), 2);
    for (int i = 0; i < 40; ++i) {
      { GPUPROBE_RANGE("request"); }
      REQUIRE(raise(SIGUSR2) == 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(60));  // past the 50 ms look
    }
    REQUIRE(session.stop().ok());
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::fclose(to);
    text = read_file(metrics.string());
    const std::string stderr_text = read_file(said.string());
    CAPTURE(stderr_text);
    CHECK(count_lines(stderr_text, "no dump: within dump_cooldown") == 1);
  }
  CAPTURE(text);
  const double fired = sample(text, "gpuprobe_triggers_fired_total");
  const double written = sample(text, "gpuprobe_dumps_written_total");
  double suppressed = 0;
  for (const char* limit : {"cooldown", "max_per_hour", "dump_in_progress"}) {
    const double v =
        sample(text, std::string("gpuprobe_triggers_suppressed_total{limit=\"") + limit + "\"}");
    if (v > 0) suppressed += v;
  }
  CHECK(written == 1);
  CHECK(fired >= 2);  // the handler's flag is looked at every 50 ms: most signals are seen
  CHECK(fired == written + suppressed);
}

TEST_CASE("14: the final metrics count the dumps written while the session stopped") {
  TempDir dir;
  const fs::path metrics = dir.path / "m.prom";
  {
    Session session("flight=5,dump_after=2,dump=" + (dir.path / "d").string() +
                    ",metrics_file=" + metrics.string());
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("request"); }
    std::string path;
    REQUIRE(dump("at the end", &path).ok());  // still waiting for its 2 s after at stop()
    REQUIRE(session.stop().ok());
    REQUIRE(fs::exists(fs::path(path) / "dump.json"));
  }
  CHECK(has_line(read_file(metrics.string()), "gpuprobe_dumps_written_total 1"));
}

}  // namespace
}  // namespace gpuprobe
