// On-demand windows (issue 43, item 3): the control socket a session listens on, `gpuprobe
// capture PID` against it, POST /capture's hook, and the ways a request is refused. Nothing here
// asserts a duration: windows are short, and each check waits for what it needs.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/private_dir.h"
#include "gpuprobe/gpuprobe.hpp"
#include "session/builtin_sinks.h"
#include "session/capture_window.h"
#include "session/control_socket.h"
#include "support/catch.hpp"

namespace fs = std::filesystem;
using gpuprobe::Session;
using gpuprobe::Status;

namespace {

// A fresh directory under the system's temporary one, with the control directory inside it
// named by GPUPROBE_CONTROL_DIR for the sessions and requests of this process.
struct Sandbox {
  fs::path root;
  fs::path control;
  Sandbox() {
    root = fs::temp_directory_path() /
           ("gpuprobe_capture_test_" + std::to_string(getpid()) + "_" + std::to_string(++count()));
    fs::remove_all(root);
    fs::create_directories(root);
    control = root / "ctl";
    setenv(gpuprobe::session::kControlDirVariable, control.c_str(), 1);
  }
  ~Sandbox() {
    unsetenv(gpuprobe::session::kControlDirVariable);
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  fs::path socket() const { return control / (std::to_string(getpid()) + ".sock"); }
  static int& count() {
    static int n = 0;
    return n;
  }
};

// The names of the events in a Chrome trace.
std::multiset<std::string> names_in(const fs::path& file) {
  std::ifstream in(file);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::multiset<std::string> names;
  for (const auto& e : trace["traceEvents"]) {
    if (e.contains("name") && e.value("ph", "") != "M") names.insert(e["name"].get<std::string>());
  }
  return names;
}

// Records "during" ranges on this thread until `done`.
void record_until(const std::atomic<bool>& done) {
  while (!done.load()) {
    GPUPROBE_RANGE("during");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Runs a request on a thread of its own while this one records.
// The process's working directory is `dir` while this lives (a failed REQUIRE included).
struct InDirectory {
  fs::path old = fs::current_path();
  explicit InDirectory(const fs::path& dir) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(old); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;
};

struct Request {
  std::atomic<bool> done{false};
  std::atomic<bool> started{false};
  Status status;
  std::string paths;
  std::thread thread;
  Request(pid_t pid, double seconds, std::string outputs) {
    thread = std::thread([this, pid, seconds, outputs] {
      status = gpuprobe::session::request_capture(
          pid, seconds, outputs, std::chrono::seconds(120),
          [this](std::string_view) { started = true; }, &paths);
      done = true;
    });
  }
  ~Request() {
    if (thread.joinable()) thread.join();
  }
};

// Sends `line` to the control socket at `path` and returns the first reply line.
std::string exchange(const fs::path& path, const std::string& line) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return "connect failed";
  }
  static_cast<void>(::send(fd, line.data(), line.size(), MSG_NOSIGNAL));
  std::string reply;
  char c = 0;
  while (::recv(fd, &c, 1, 0) == 1 && c != '\n') reply += c;
  ::close(fd);
  return reply;
}

}  // namespace

namespace {
constexpr gpuprobe::CallSite kEarly{"early", "", "", 0, 0, gpuprobe::Category::kApp};
constexpr gpuprobe::CallSite kAcross{"across", "", "", 0, 0, gpuprobe::Category::kApp};
constexpr gpuprobe::CallSite kInside{"inside", "", "", 0, 0, gpuprobe::Category::kApp};
constexpr gpuprobe::CallSite kLate{"late", "", "", 0, 0, gpuprobe::Category::kApp};
}  // namespace

TEST_CASE("a window passes on the events that overlap it, and keeps bursty GPU recording on") {
  Sandbox box;
  gpuprobe::session::register_builtin_sinks();  // what a session's start does: chrome= exists
  using gpuprobe::Event;
  using gpuprobe::EventType;
  auto tap = std::make_shared<gpuprobe::session::WindowTap>();
  REQUIRE(tap->open(gpuprobe::TraceInfo{}).ok());
  std::atomic<std::uint64_t> now{1000};
  std::uint64_t gpu_until = 0;
  gpuprobe::session::WindowHooks hooks{[&now] { return now.load(); }, [] {},
                                       [] { return gpuprobe::Stats{}; },
                                       [&gpu_until](std::uint64_t t) { gpu_until = t; }, 0.5};
  gpuprobe::session::WindowControl control(tap, hooks);
  const fs::path out = box.root / "unit.json";
  gpuprobe::Status result;
  std::atomic<bool> done{false};
  REQUIRE(control
              .begin(
                  {100, "chrome=" + out.string()}, nullptr,
                  [&](const gpuprobe::Status& s, const std::string&) {
                    result = s;
                    done = true;
                  },
                  nullptr)
              .ok());
  // 100 s at 0.5 ns a tick from tick 1000: the GPU is asked to record past tick 1000 + 2e11.
  CHECK(gpu_until == 1000 + 200'000'000'000ull + 1);
  const gpuprobe::TimeBase time(0, 0, 0.5);
  const std::vector<gpuprobe::ThreadInfo> threads(1);
  const std::vector<Event> events = {Event{EventType::kRange, 0, &kEarly, 100, 900, 0.0},
                                     Event{EventType::kRange, 0, &kAcross, 500, 1500, 0.0},
                                     Event{EventType::kRange, 0, &kInside, 1200, 1300, 0.0}};
  REQUIRE(tap->write({events.data(), events.size(), &time, &threads}).ok());
  now = 2000;
  control.stop();  // cuts the window short at tick 2000; its outputs are closed
  REQUIRE(done);
  CHECK(result.message().find("cut short") != std::string::npos);
  const Event late{EventType::kRange, 0, &kLate, 2500, 2600, 0.0};
  REQUIRE(tap->write({&late, 1, &time, &threads}).ok());  // after the window: not written
  const std::multiset<std::string> names = names_in(out);
  CHECK(names.count("early") == 0);
  CHECK(names.count("across") == 1);
  CHECK(names.count("inside") == 1);
  CHECK(names.count("late") == 0);
  bool busy = false;
  CHECK(!control.begin({1, "chrome=" + out.string()}, nullptr, nullptr, &busy).ok());
  CHECK(!busy);  // stopped, not busy
}

TEST_CASE("a private directory is made 0700, and refused as a link, another's or open to others") {
  Sandbox box;
  const std::string dir = (box.root / "private").string();
  int fd = -1;
  REQUIRE(gpuprobe::base::open_private_directory(dir, true, geteuid(), &fd).ok());
  ::close(fd);
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  Status s = gpuprobe::base::open_private_directory(dir, false, geteuid() + 1, &fd);
  CHECK(!s.ok());
  CHECK(s.message().find("belongs to uid") != std::string::npos);
  CHECK(fd == -1);

  ::chmod(dir.c_str(), 0755);
  s = gpuprobe::base::open_private_directory(dir, true, geteuid(), &fd);
  CHECK(!s.ok());
  CHECK(s.message().find("mode 0755") != std::string::npos);

  const std::string link = (box.root / "link").string();
  fs::create_directory_symlink(box.root / "elsewhere", link);
  fs::create_directory(box.root / "elsewhere");
  ::chmod((box.root / "elsewhere").c_str(), 0700);
  s = gpuprobe::base::open_private_directory(link, true, geteuid(), &fd);
  CHECK(!s.ok());
  CHECK(s.message().find("symbolic link") != std::string::npos);
}

namespace {

// A UNIX socket bound at `path`; listening or not.
int bound_socket(const fs::path& path, bool listening) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  if (listening) REQUIRE(::listen(fd, 1) == 0);
  return fd;
}

}  // namespace

TEST_CASE("a session listens on PID.sock in its control directory and removes it at stop") {
  Sandbox box;
  // Left by processes that are gone (pids above any pid_max): the one nobody listens on is
  // removed when a session starts; one that answers (a process of another PID namespace) stays.
  fs::create_directory(box.control);
  ::chmod(box.control.c_str(), 0700);
  ::close(bound_socket(box.control / "4194305.sock", false));
  const int live = bound_socket(box.control / "4194306.sock", true);
  {
    Session session("flush_ms=5");
    REQUIRE(session.ok());
    struct stat st {};
    REQUIRE(::lstat(box.socket().c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    REQUIRE(::stat(box.control.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(!fs::exists(fs::symlink_status(box.control / "4194305.sock")));
    CHECK(fs::exists(fs::symlink_status(box.control / "4194306.sock")));
    REQUIRE(session.stop().ok());
    CHECK(!fs::exists(fs::symlink_status(box.socket())));
  }
  ::close(live);
  Session off("flush_ms=5,control=off");
  REQUIRE(off.ok());
  CHECK(!fs::exists(fs::symlink_status(box.socket())));
  const Status s = gpuprobe::session::request_capture(getpid(), 0.1, "chrome=/dev/null",
                                                      std::chrono::seconds(5), nullptr, nullptr);
  CHECK(!s.ok());
  CHECK(s.message().find("has no gpuprobe control socket") != std::string::npos);
  CHECK(s.message().find("control=off") != std::string::npos);
}

TEST_CASE("a capture writes a Chrome trace of what ran during the window, and only that") {
  Sandbox box;
  Session session("flush_ms=5");
  REQUIRE(session.ok());
  { GPUPROBE_RANGE("before"); }
  session.flush();
  const fs::path out = box.root / "window.json";
  std::atomic<bool> stop{false};
  {
    Request request(getpid(), 0.3, "chrome=" + out.string());
    std::thread recorder([&] { record_until(request.done); });
    recorder.join();
    request.thread.join();
    REQUIRE(request.status.ok());
    CHECK(request.started);
    CHECK(request.paths == out.string());
  }
  { GPUPROBE_RANGE("after"); }
  REQUIRE(session.stop().ok());
  REQUIRE(fs::exists(out));
  const std::multiset<std::string> names = names_in(out);
  CHECK(names.count("during") > 0);
  CHECK(names.count("before") == 0);
  CHECK(names.count("after") == 0);
}

TEST_CASE("one window at a time, beside a flight dump; stop cuts the window short, written") {
  Sandbox box;
  Session session("flush_ms=5,flight=10,dump=" + (box.root / "dumps").string());
  REQUIRE(session.ok());
  const fs::path out = box.root / "long.json";
  Request first(getpid(), 600, "chrome=" + out.string());
  while (!first.started && !first.done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(first.started);
  { GPUPROBE_RANGE("inside"); }
  const Status second = gpuprobe::session::request_capture(
      getpid(), 0.1, "chrome=" + (box.root / "second.json").string(), std::chrono::seconds(30),
      nullptr, nullptr);
  CHECK(!second.ok());
  CHECK(second.message().find("is busy: a window is being recorded already") != std::string::npos);
  std::string dump;
  CHECK(gpuprobe::dump("while a window records", &dump).ok());
  // The session's stop does not wait out the window: it ends it, and it is written.
  REQUIRE(session.stop().ok());
  first.thread.join();
  CHECK(!first.status.ok());
  CHECK(first.status.message().find("cut short") != std::string::npos);
  REQUIRE(fs::exists(out));
  CHECK(names_in(out).count("inside") == 1);
  CHECK(!fs::exists(box.root / "second.json"));
  CHECK(fs::exists(fs::path(dump) / "dump.json"));
}

TEST_CASE("bad requests get one clear line") {
  Sandbox box;
  // No such process (pid_max is at most 2^22).
  Status s = gpuprobe::session::request_capture(99999999, 1, "chrome=/dev/null",
                                                std::chrono::seconds(5), nullptr, nullptr);
  CHECK(!s.ok());
  CHECK(s.message() == "no process 99999999 (it is not running)");
  // A process without gpuprobe: this one, before any session.
  s = gpuprobe::session::request_capture(getpid(), 1, "chrome=/dev/null", std::chrono::seconds(5),
                                         nullptr, nullptr);
  CHECK(!s.ok());
  CHECK(s.message().find("runs no gpuprobe session") != std::string::npos);
  CHECK(gpuprobe::session::peer_allowed(1000, 1000));
  CHECK(gpuprobe::session::peer_allowed(0, 1000));
  CHECK(!gpuprobe::session::peer_allowed(1001, 1000));

  Session session("flush_ms=5");
  REQUIRE(session.ok());
  s = gpuprobe::session::request_capture(getpid(), 0.1, "metrics_file=" + box.root.string() + "/m",
                                         std::chrono::seconds(30), nullptr, nullptr);
  CHECK(!s.ok());
  CHECK(s.message().find("not a trace output") != std::string::npos);
  CHECK(exchange(box.socket(), "capture abc chrome=/dev/null\n").rfind("error seconds 'abc'", 0) ==
        0);
  CHECK(exchange(box.socket(), "capture 0 chrome=/dev/null\n").rfind("error seconds '0'", 0) == 0);
  CHECK(exchange(box.socket(), "capture 1000 chrome=/dev/null\n").rfind("error seconds", 0) == 0);
  CHECK(exchange(box.socket(), "hello\n").rfind("error unknown request", 0) == 0);
  CHECK(exchange(box.socket(), std::string(gpuprobe::session::kMaxControlLine, 'x')) ==
        "error request line too long");
  // The session still takes a good request after all that.
  const fs::path out = box.root / "good.json";
  Request good(getpid(), 0.05, "chrome=" + out.string());
  good.thread.join();
  CHECK(good.status.ok());
  CHECK(fs::exists(out));
}

TEST_CASE("POST /capture's hook starts a window in the working directory; busy and bad seconds") {
  Sandbox box;
  InDirectory here(box.root);
  {
    // Without a control socket or a metrics port, nothing can ask: the session takes no window.
    Session none("flush_ms=5,control=off");
    REQUIRE(none.ok());
    CHECK(gpuprobe::session::capture_hook()("1").http_status == 503);
  }
  Session session("flush_ms=5,control=off,metrics=0");
  REQUIRE(session.ok());
  const auto hook = gpuprobe::session::capture_hook();
  CHECK(hook("abc").http_status == 400);
  CHECK(hook("601").http_status == 400);
  const gpuprobe::metrics::CaptureReply reply = hook("0.2");
  CHECK(reply.http_status == 202);
  const fs::path out = reply.body.substr(0, reply.body.size() - 1);
  CHECK(out.parent_path() == box.root);
  CHECK(out.filename().string().rfind("gpuprobe_capture_", 0) == 0);
  const gpuprobe::metrics::CaptureReply busy = hook("1");
  CHECK((busy.http_status == 409 || fs::exists(out)));
  for (int i = 0; i < 6000 && !fs::exists(out); ++i) {
    GPUPROBE_RANGE("http window");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(fs::exists(out));
  REQUIRE(session.stop().ok());
  CHECK(hook("1").http_status == 503);
}

TEST_CASE("POST /capture starts at most kMaxHttpWindowsPerHour windows an hour, then says 429") {
  Sandbox box;
  InDirectory here(box.root);
  Session session("flush_ms=5,metrics=0");
  REQUIRE(session.ok());
  const auto hook = gpuprobe::session::capture_hook();
  // Deadlines, not timings: generous, so that a loaded machine only makes the test slower.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int started = 0;
  // Each window short; a request while one runs is busy (409) and not counted.
  while (started < gpuprobe::session::kMaxHttpWindowsPerHour &&
         std::chrono::steady_clock::now() < deadline) {
    const gpuprobe::metrics::CaptureReply reply = hook("0.001");
    REQUIRE((reply.http_status == 202 || reply.http_status == 409));
    if (reply.http_status == 202) ++started;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(started == gpuprobe::session::kMaxHttpWindowsPerHour);
  // The limit is checked before whether a window runs: the next request is refused at once.
  const gpuprobe::metrics::CaptureReply past = hook("0.001");
  CHECK(past.http_status == 429);
  CHECK(past.body.find("at most 20 windows an hour") != std::string::npos);
  // The control socket is not limited: once the 20th window has ended, it gets one.
  const fs::path out = box.root / "socket.json";
  Status by_socket = Status::Error("not asked");
  while (std::chrono::steady_clock::now() < deadline) {
    Request request(getpid(), 0.01, "chrome=" + out.string());
    request.thread.join();
    by_socket = request.status;
    if (by_socket.ok() || by_socket.message().find("busy") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(by_socket.ok());
  INFO(by_socket.message());
  REQUIRE(session.stop().ok());
}

#ifdef GPUPROBE_CLI
namespace {
// Runs the gpuprobe command with `args` (after `prefix`, a program that runs it); its exit
// status, and its stdout and stderr.
int run_cli(const std::vector<std::string>& args, const fs::path& dir, std::string* out,
            std::string* err, std::vector<std::string> prefix = {}) {
  std::vector<char*> argv;
  prefix.push_back(GPUPROBE_CLI);
  prefix.insert(prefix.end(), args.begin(), args.end());
  std::vector<std::string> copy = prefix;
  for (std::string& a : copy) argv.push_back(a.data());
  const std::string cli = copy.front();
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string out_path = (dir / "cli.out").string(), err_path = (dir / "cli.err").string();
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cli.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream o(out_path), e(err_path);
  std::stringstream os, es;
  os << o.rdbuf();
  es << e.rdbuf();
  *out = os.str();
  *err = es.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
}  // namespace

TEST_CASE(
    "gpuprobe capture PID waits for the window and prints its path; bad PIDs fail in a line") {
  Sandbox box;
  std::string out, err;
  CHECK(run_cli({"capture", "99999999"}, box.root, &out, &err) == 1);
  CHECK(err == "gpuprobe: no process 99999999 (it is not running)\n");
  CHECK(run_cli({"capture", std::to_string(getpid()), "--seconds", "0.1"}, box.root, &out, &err) ==
        1);
  CHECK(err.find("runs no gpuprobe session") != std::string::npos);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  // Another user's process: as root, this test asks as nobody (setpriv, where it is installed).
  if (geteuid() == 0 && fs::exists("/usr/bin/setpriv")) {
    CHECK(run_cli({"capture", std::to_string(getpid())}, box.root, &out, &err,
                  {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}) == 1);
    CHECK(err.find("belongs to uid 0: gpuprobe capture reaches only your own processes") !=
          std::string::npos);
  }

  Session session("flush_ms=5");
  REQUIRE(session.ok());
  const fs::path trace = box.root / "cli window.json";
  std::atomic<bool> done{false};
  std::thread recorder([&] { record_until(done); });
  const int status =
      run_cli({"capture", std::to_string(getpid()), "--seconds", "0.3", "-o", trace.string(), "-c",
               "perfetto=" + (box.root / "w.pftrace").string()},
              box.root, &out, &err);
  done = true;
  recorder.join();
  CHECK(status == 0);
  CHECK(out == trace.string() + "," + (box.root / "w.pftrace").string() + "\n");
  CHECK(err.find("recording 0.3 s of process") != std::string::npos);
  REQUIRE(fs::exists(trace));
  CHECK(names_in(trace).count("during") > 0);
  CHECK(fs::file_size(box.root / "w.pftrace") > 0);
  CHECK(run_cli({"capture", std::to_string(getpid()), "--seconds", "0"}, box.root, &out, &err) ==
        2);
  REQUIRE(session.stop().ok());
}
#ifdef GPUPROBE_SIGNAL_TARGET
TEST_CASE("a program traced through GPUPROBE is captured twice by another process") {
  Sandbox box;
  // The target: records "loop" ranges for up to 30 s, its session started by GPUPROBE.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ready[1], 1);
  posix_spawn_file_actions_addclose(&actions, ready[0]);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("GPUPROBE=", 0) != 0) env_text.emplace_back(*e);
  }
  env_text.push_back("GPUPROBE=flush_ms=5,chrome=" + (box.root / "whole.json").string());
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::string program = GPUPROBE_SIGNAL_TARGET, mode = "wait";
  char* argv[] = {program.data(), mode.data(), nullptr};
  pid_t target = 0;
  REQUIRE(posix_spawn(&target, program.c_str(), &actions, nullptr, argv, env.data()) == 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);  // "ready": its session runs
  ::close(ready[0]);
  for (int round = 0; round < 2; ++round) {
    const fs::path out = box.root / ("capture" + std::to_string(round) + ".json");
    std::string text, err;
    CHECK(run_cli({"capture", std::to_string(target), "--seconds", "0.2", "-o", out.string()},
                  box.root, &text, &err) == 0);
    CHECK(text == out.string() + "\n");
    REQUIRE(fs::exists(out));
    CHECK(names_in(out).count("loop") > 0);
  }
  ::kill(target, SIGTERM);
  int status = 0;
  REQUIRE(waitpid(target, &status, 0) == target);
  CHECK(fs::exists(box.root / "whole.json"));  // the session's own output, as ever
  CHECK(!fs::exists(box.control / (std::to_string(target) + ".sock")));
}
#endif
#endif
