// What a hostile local user can plant where gpuprobe writes, and what gpuprobe does with it
// (issue 48, items 1-5): links of other users are not followed, devices and other users' FIFOs
// are refused, a FIFO whose reader reads nothing costs a bounded wait, the metrics file and
// TensorBoard's events file write through nothing planted, two outputs on one file are
// refused however they are spelled. Planting as another user needs root (CI runs as root):
// without it those sections say so and check nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "base/output_file.h"
#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::read_file;

constexpr uid_t kNobody = 65534;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe_attack_XXXXXX").string();
    path = mkdtemp(tmpl.data());
    fs::permissions(path, fs::perms::all | fs::perms::sticky_bit);  // as /tmp is
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// A root-only file with something in it: what the attacker wants overwritten.
std::string make_victim(const TempDir& dir) {
  const std::string victim = dir.file("victim");
  { std::ofstream(victim) << "root's secret"; }
  chmod(victim.c_str(), 0600);
  return victim;
}

// `link` -> `target`, owned by nobody: planted by another user.
void plant_link(const std::string& target, const std::string& link) {
  fs::create_symlink(target, link);
  REQUIRE(lchown(link.c_str(), kNobody, kNobody) == 0);
}

bool can_plant() { return geteuid() == 0; }

TEST_CASE("1: a link another user planted at the output path is not followed") {
  if (!can_plant()) {
    WARN("skipped: planting as another user needs root");
    return;
  }
  TempDir dir;
  const std::string victim = make_victim(dir);
  const std::string path = dir.file("t.json");
  SECTION("to a root-only file") { plant_link(victim, path); }
  SECTION("to a device") { plant_link("/dev/full", path); }
  Session session("chrome=" + path);
  CHECK_FALSE(session.ok());
  CHECK(contains(session.error(), "symbolic link of another user (uid 65534)"));
  CHECK(read_file(victim) == "root's secret");
  CHECK(fs::is_symlink(path));
}

TEST_CASE("1: a link of gpuprobe's own user is followed, a device behind it is not written") {
  TempDir dir;
  const std::string target = dir.file("real.json");
  const std::string link = dir.file("t.json");
  fs::create_symlink("real.json", link);  // relative, as users make them
  {
    Session session("chrome=" + link);
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("through my own link"); }
    REQUIRE(session.stop().ok());
  }
  CHECK(fs::is_symlink(link));
  CHECK(contains(read_file(target), "through my own link"));
  fs::remove(link);
  fs::create_symlink("/dev/full", link);
  base::OutputFile out;
  const Status s = out.open(link);
  REQUIRE_FALSE(s.ok());
  CHECK(contains(s.message(), "is a device or socket"));
  CHECK_FALSE(out.open("/dev/zero").ok());
}

TEST_CASE("2: a FIFO whose reader never reads costs a bounded wait, not a hung stop()") {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // opened, never read
  REQUIRE(reader >= 0);
  base::OutputFile out;
  REQUIRE(out.open(fifo).ok());
  out.set_stall_limit_ms(200);
  out.buffer().assign(4 << 20, 'x');  // more than any pipe holds
  const Status s = out.commit();
  ::close(reader);
  REQUIRE_FALSE(s.ok());
  CHECK(contains(s.message(), "its reader took nothing for 0.2 s"));
}

TEST_CASE("2: a FIFO of another user is refused") {
  if (!can_plant()) {
    WARN("skipped: planting as another user needs root");
    return;
  }
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  REQUIRE(mkfifo(fifo.c_str(), 0666) == 0);
  REQUIRE(chown(fifo.c_str(), kNobody, kNobody) == 0);
  Session session("chrome=" + fifo);
  CHECK_FALSE(session.ok());
  CHECK(contains(session.error(), "FIFO of another user"));
}

TEST_CASE("3: metrics_file= writes through no planted link, and /dev/null stays a device") {
  TempDir dir;
  const std::string path = dir.file("m.prom");
  if (can_plant()) {
    const std::string victim = make_victim(dir);
    plant_link(victim, path);
    plant_link(victim, path + ".tmp");  // the name the old code wrote first
    Session session("metrics_file=" + path);
    CHECK_FALSE(session.ok());
    CHECK(read_file(victim) == "root's secret");
    fs::remove(path);
  } else {
    WARN("skipped (the planted link): planting as another user needs root");
  }
  {
    Session session("metrics_file=/dev/null");
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("request"); }
    REQUIRE(session.stop().ok());
    struct stat st {};
    REQUIRE(stat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  {
    Session session("metrics_file=" + path);
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("request"); }
    REQUIRE(session.stop().ok());
  }
  CHECK(contains(read_file(path), "gpuprobe_range_duration_seconds_count{name=\"request\"} 1"));
  for (const auto& e : fs::directory_iterator(dir.path)) {
    CHECK_FALSE(contains(e.path().filename().string(), ".tmp-"));  // no temporary file left
  }
}

TEST_CASE("4: TensorBoard's events file is never one that was there") {
  TempDir dir;
  const std::string victim = make_victim(dir);
  const fs::path logdir = dir.path / "tb";
  fs::create_directories(logdir);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // Every name the events file could have in the next seconds, planted.
  const std::time_t now = std::time(nullptr);
  for (std::time_t t = now - 1; t <= now + 3; ++t) {
    char stamp[16];
    std::snprintf(stamp, sizeof stamp, "%010lld", static_cast<long long>(t));
    const std::string name = std::string("events.out.tfevents.") + stamp + "." + host + "." +
                             std::to_string(getpid()) + ".gpuprobe";
    if (can_plant()) {
      plant_link(victim, (logdir / name).string());
    } else {
      fs::create_symlink(victim, logdir / name);
    }
  }
  {
    Session session("tensorboard=" + logdir.string());
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("step work"); }
    step();
    REQUIRE(session.stop().ok());
  }
  CHECK(read_file(victim) == "root's secret");
  int written = 0;
  for (const auto& e : fs::directory_iterator(logdir)) {
    if (!e.is_symlink() && contains(e.path().filename().string(), "tfevents")) {
      ++written;
      CHECK(fs::file_size(e.path()) > 0);
    }
  }
  CHECK(written == 1);
}

TEST_CASE("5: two outputs on one file are refused however the path is spelled") {
  TempDir dir;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path);
  fs::create_directories("sub");
  { std::ofstream("exists.json") << "{}"; }
  fs::create_symlink("exists.json", "alias.json");
  for (const char* config :
       {"chrome=dup.json,perfetto=./dup.json", "chrome=dup.json,perfetto=sub/../dup.json",
        "chrome=exists.json,perfetto=alias.json", "perfetto=dup.pb,metrics_file=./dup.pb"}) {
    Session session(config);
    INFO(config);
    CHECK_FALSE(session.ok());
    CHECK(contains(session.error(), "both write one file"));
    CHECK_FALSE(session.running());
  }
  CHECK_FALSE(fs::exists("dup.json"));
  CHECK(read_file("exists.json") == "{}");
  fs::current_path(cwd);
}

}  // namespace
}  // namespace gpuprobe
