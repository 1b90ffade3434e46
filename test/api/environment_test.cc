// GPUPROBE=<config> traces a program that never creates a Session.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

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

TEST_CASE("A bad GPUPROBE value prints one error and the program runs normally") {
  const Run run = run_traced("chrome=x.json,bogus=1");
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.output.find("fib(12) = 144") != std::string::npos);
  REQUIRE(run.output.find("gpuprobe: unknown config key 'bogus'") != std::string::npos);
  REQUIRE_FALSE(fs::exists("x.json"));
}

}  // namespace
