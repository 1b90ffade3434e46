// Output files are created safely: a unique, exclusive temporary file that follows no symbolic
// link, renamed only if it is still the file written; special files written in place and never
// replaced; directories and two outputs on one path refused before recording; stale temporary
// files of dead writers removed.
#include "base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe_out_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.insert(e.path().filename().string());
    return out;
  }
  // The temporary files in the directory.
  std::vector<std::string> temps() const {
    std::vector<std::string> out;
    for (const std::string& n : names())
      if (n.find(".tmp-") != std::string::npos) out.push_back(file(n));
    return out;
  }

 private:
  fs::path path_;
};

TEST_CASE("two writers of one path: neither output is lost, the second is written beside") {
  // What two processes given one path do (two containers whose programs have the same pid in
  // their PID namespaces, on a shared volume): nothing here depends on the pid.
  TempDir dir;
  const std::string path = dir.file("t.json");
  base::OutputFile a, b;
  REQUIRE(a.open(path).ok());
  REQUIRE(b.open(path).ok());
  REQUIRE(dir.temps().size() == 2);
  REQUIRE(a.write("first").ok());
  REQUIRE(b.write("second").ok());
  REQUIRE(a.commit().ok());
  const Status s = b.commit();
  REQUIRE_FALSE(s.ok());  // said, not silently replaced
  CHECK(testing::contains(s.message(), "created or replaced by another writer"));
  CHECK(testing::contains(s.message(), b.written_path()));
  CHECK(testing::read_file(path) == "first");
  CHECK(testing::read_file(b.written_path()) == "second");
  CHECK(dir.names().size() == 2);
  CHECK(dir.temps().empty());
  // A later session replaces the file it found there when it started: its own earlier output.
  base::OutputFile c;
  REQUIRE(c.open(path).ok());
  REQUIRE(c.write("third").ok());
  REQUIRE(c.commit().ok());
  CHECK(testing::read_file(path) == "third");
}

TEST_CASE("a symbolic link planted at the old predictable temporary name is not followed") {
  TempDir dir;
  const std::string victim = dir.file("victim");
  { std::ofstream(victim) << "precious"; }
  const std::string path = dir.file("t.json");
  // What an attacker with write access to the directory could plant for the pid before.
  fs::create_symlink(victim, path + ".tmp-" + std::to_string(getpid()));
  base::OutputFile out;
  REQUIRE(out.open(path).ok());
  REQUIRE(out.write("trace").ok());
  REQUIRE(out.commit().ok());
  CHECK(testing::read_file(victim) == "precious");
  CHECK(testing::read_file(path) == "trace");
}

TEST_CASE("a temporary file replaced while recording is neither renamed nor removed") {
  TempDir dir;
  const std::string path = dir.file("t.json");
  base::OutputFile out;
  REQUIRE(out.open(path).ok());
  REQUIRE(out.write("ours").ok());
  const auto temps = dir.temps();
  REQUIRE(temps.size() == 1);
  const std::string foreign = dir.file("foreign");
  { std::ofstream(foreign) << "foreign content"; }
  fs::rename(foreign, temps[0]);
  const Status s = out.commit();
  REQUIRE_FALSE(s.ok());
  CHECK(testing::contains(s.message(), "was replaced or removed while recording"));
  CHECK_FALSE(fs::exists(path));
  CHECK(testing::read_file(temps[0]) == "foreign content");
}

TEST_CASE("special files are written in place, never replaced") {
  SECTION("/dev/null stays a device") {
    Session session("chrome=/dev/null");
    REQUIRE(session.ok());
    { GPUPROBE_RANGE("into the void"); }
    REQUIRE(session.stop().ok());
    struct stat st;
    REQUIRE(stat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  SECTION("a FIFO carries the trace to its reader") {
    TempDir dir;
    const std::string fifo = dir.file("pipe");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    std::string received;
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    std::thread drain([&] {
      fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) & ~O_NONBLOCK);
      char buf[4096];
      for (;;) {
        const ssize_t n = ::read(reader, buf, sizeof buf);
        if (n > 0) {
          received.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 && !received.empty()) {
          break;
        } else if (n < 0) {
          break;
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
    });
    {
      Session session("chrome=" + fifo);
      REQUIRE(session.ok());
      { GPUPROBE_RANGE("through the pipe"); }
      REQUIRE(session.stop().ok());
    }
    drain.join();
    ::close(reader);
    CHECK(testing::contains(received, "through the pipe"));
    struct stat st;
    REQUIRE(stat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(dir.temps().empty());
  }
  SECTION("a FIFO with no reader is an error at start, not a wait") {
    TempDir dir;
    const std::string fifo = dir.file("pipe");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    Session session("chrome=" + fifo);
    CHECK_FALSE(session.ok());
  }
}

TEST_CASE("directories and two outputs on one path are refused before recording") {
  TempDir dir;
  // (chrome=DIR/, with the slash, is torch.profiler's directory layout, not a file.)
  for (const char* config : {"chrome=.", "perfetto=/"}) {
    Session session(config);
    INFO(config);
    CHECK_FALSE(session.ok());
    CHECK_FALSE(session.running());
  }
  {
    const std::string d = dir.file("sub");
    fs::create_directory(d);
    Session session("chrome=" + d);
    CHECK_FALSE(session.ok());
    CHECK(testing::contains(session.error(), "is a directory"));
  }
  {
    const std::string a = dir.file("a.json");
    Session session("chrome=" + a + ",perfetto=" + dir.file("./a.json"));
    CHECK_FALSE(session.ok());
    CHECK(testing::contains(session.error(), "both write"));
    CHECK_FALSE(session.running());
    CHECK_FALSE(fs::exists(a));
  }
}

TEST_CASE("temporary files of dead writers are removed; live ones are kept") {
  TempDir dir;
  const std::string path = dir.file("t.json");
  const std::string prefix = path + ".tmp-" + base::host_name() + "-";
  // Left by a killed writer: nobody holds it locked. Its pid means nothing (it may be of
  // another PID namespace): only the lock says whether a writer is alive.
  const std::string dead = prefix + std::to_string(getpid()) + "-deadbeef";
  const std::string fresh = prefix + "77-0badf00d";  // just created: its writer locks it next
  const std::string other_host = path + ".tmp-someotherhost-2147483600-0badf00d";
  for (const std::string& f : {dead, fresh, other_host}) std::ofstream(f) << "left over";
  const timespec old_times[2] = {{0, UTIME_OMIT}, {time(nullptr) - 60, 0}};
  REQUIRE(utimensat(AT_FDCWD, dead.c_str(), old_times, 0) == 0);
  REQUIRE(utimensat(AT_FDCWD, other_host.c_str(), old_times, 0) == 0);
  // A live writer, whatever its age.
  base::OutputFile live;
  REQUIRE(live.open(path, /*clean_stale=*/false).ok());
  REQUIRE(dir.temps().size() == 4);
  std::string live_temp;
  for (const std::string& t : dir.temps())
    if (t != dead && t != fresh && t != other_host) live_temp = t;
  REQUIRE(utimensat(AT_FDCWD, live_temp.c_str(), old_times, 0) == 0);
  base::OutputFile out;
  REQUIRE(out.open(path).ok());
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(fresh));
  CHECK(fs::exists(live_temp));
  CHECK(fs::exists(other_host));
  out.discard();
  live.discard();
}

}  // namespace
}  // namespace gpuprobe
