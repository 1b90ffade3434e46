// GPUPROBE=<config> traces a program that never creates a Session.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"

namespace {

namespace fs = std::filesystem;

struct Run {
  int exit_code;
  std::string output;
};

Run run_traced(const std::string& env_value) {
  const fs::path out = fs::temp_directory_path() / ("gpuprobe_env_out_" + std::to_string(getpid()));
  const std::string cmd =
      "GPUPROBE='" + env_value + "' " GPUPROBE_ENV_TRACED_BINARY " > " + out.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(out);
  return Run{WEXITSTATUS(rc), ss.str()};
}

TEST_CASE("GPUPROBE starts a session at load and writes the trace at exit") {
  const fs::path trace =
      fs::temp_directory_path() / ("gpuprobe_env_" + std::to_string(getpid()) + ".json");
  const Run run = run_traced("chrome=" + trace.string());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  std::ifstream in(trace);
  const nlohmann::json doc = nlohmann::json::parse(in);
  fs::remove(trace);
  std::size_t fib = 0, main_range = 0, done = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string name = e.value("name", "");
    fib += name == "fib";
    main_range += name == "main";
    done += name == "done";
  }
  REQUIRE(fib == 465);  // calls of fib(12)
  REQUIRE(main_range == 1);
  REQUIRE(done == 1);
  REQUIRE(doc["gpuprobe"]["events_dropped"] == 0);
}

// A fresh directory per test, removed afterwards.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe_env_XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::size_t count_named(const nlohmann::json& doc, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : doc["traceEvents"]) n += e.value("name", "") == name;
  return n;
}

nlohmann::json load(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Starts signal_target `mode` with GPUPROBE=`config`, its stdout on a pipe; waits for "ready".
pid_t start_target(const std::string& config, const char* mode) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    setenv("GPUPROBE", config.c_str(), 1);
    unsetenv("GPUPROBE_OWNER_PID");
    execl(GPUPROBE_SIGNAL_TARGET, GPUPROBE_SIGNAL_TARGET, mode, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  if (std::strcmp(mode, "wait") == 0) {
    char buf[16] = {};
    REQUIRE(read(out[0], buf, 6) == 6);
    REQUIRE(std::string(buf, 5) == "ready");
  }
  close(out[0]);
  return child;
}

TEST_CASE("SIGTERM, SIGINT and SIGHUP write the trace, then end the program by the signal") {
  for (const int signo : {SIGTERM, SIGINT, SIGHUP}) {
    INFO(strsignal(signo));
    ScratchDir dir;
    const fs::path trace = dir.path / "t.json";
    const pid_t child = start_target("chrome=" + trace.string(), "wait");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(kill(child, signo) == 0);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));  // as it would have ended without gpuprobe
    CHECK(WTERMSIG(status) == signo);
    REQUIRE(fs::exists(trace));
    const nlohmann::json doc = load(trace);
    CHECK(count_named(doc, "before ready") == 1);
    CHECK(count_named(doc, "loop") > 0);
    CHECK(dir.names() == std::vector<std::string>{"t.json"});  // no temporary file left
  }
}

TEST_CASE("processes started by a traced one write files of their own") {
  ScratchDir dir;
  const fs::path trace = dir.path / "t.json";
  const pid_t root = start_target("chrome=" + trace.string(), "family");
  int status = 0;
  REQUIRE(waitpid(root, &status, 0) == root);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const std::vector<std::string> names = dir.names();
  REQUIRE(names.size() == 2);
  CHECK(count_named(load(trace), "root") == 1);
  CHECK(count_named(load(trace), "leaf") == 0);
  const std::string leaf = names[0] == "t.json" ? names[1] : names[0];
  CHECK(leaf.rfind("t.", 0) == 0);
  CHECK(leaf.size() > std::strlen("t..json"));
  CHECK(count_named(load(dir.path / leaf), "leaf") == 1);
}

TEST_CASE("A bad GPUPROBE value prints one error and the program runs normally") {
  const Run run = run_traced("chrome=x.json,bogus=1");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.output.find("fib(12) = 144") != std::string::npos);
  REQUIRE(run.output.find("gpuprobe: unknown config key 'bogus'") != std::string::npos);
  REQUIRE_FALSE(fs::exists("x.json"));
}

}  // namespace
