// `gpuprobe capture PID [--seconds N] [-o PATH] [-c OUTPUTS]`: asks a running process's gpuprobe
// session for a window of full detail now, over its control socket (session/control_socket.h),
// waits while it records, and prints the files written.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>

#include "session/control_socket.h"
#include "tools/commands/command.h"

namespace gpuprobe::tools {
namespace {

// `path` made absolute against this command's working directory: the process that writes it
// has a working directory of its own.
std::string absolute(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  return ec ? path : (cwd / path).string();
}

// "gpuprobe_capture_<pid>_<UTC>.json" in the working directory.
std::string default_output(long pid) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return absolute("gpuprobe_capture_" + std::to_string(pid) + "_" + stamp + ".json");
}

// "key=value,key=value" with each value made absolute.
std::string absolute_outputs(const std::string& config) {
  std::string out;
  std::size_t at = 0;
  while (at <= config.size()) {
    const std::size_t comma = config.find(',', at);
    const std::string item =
        config.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!item.empty()) {
      const std::size_t eq = item.find('=');
      out +=
          (out.empty() ? "" : ",") +
          (eq == std::string::npos ? item : item.substr(0, eq + 1) + absolute(item.substr(eq + 1)));
    }
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace

void add_capture_command(CLI::App& app, CommandRun* run) {
  CLI::App* cmd = app.add_subcommand(
      "capture",
      "ask a running process's gpuprobe session (GPUPROBE=, gpuprobe run, metrics=/flight=) for "
      "a window of full detail now; waits for it and prints the files written");
  auto pid = std::make_shared<long>(0);
  auto seconds = std::make_shared<double>(10);
  auto output = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  cmd->add_option("PID", *pid, "the process (of your user, or any as root)")->required();
  cmd->add_option("--seconds", *seconds, "how long the window lasts (default 10, at most 600)")
      ->check(CLI::Range(0.001, 600.0));
  cmd->add_option("-o,--output", *output,
                  "the Chrome trace to write (default gpuprobe_capture_PID_UTC.json here)");
  cmd->add_option("-c,--config", *config,
                  "trace outputs for the window instead of or besides -o, as in a config: "
                  "perfetto=w.pftrace,chrome=w.json.gz");
  cmd->callback([pid, seconds, output, config, run] {
    *run = [pid, seconds, output, config] {
      std::string outputs = absolute_outputs(*config);
      if (!output->empty() || outputs.empty()) {
        const std::string chrome = output->empty() ? default_output(*pid) : absolute(*output);
        outputs = "chrome=" + chrome + (outputs.empty() ? "" : "," + outputs);
      }
      std::string paths;
      const Status s = session::request_capture(
          static_cast<pid_t>(*pid), *seconds, outputs, std::chrono::seconds(60),
          [&](std::string_view) {
            std::fprintf(stderr, "gpuprobe: recording %g s of process %ld...\n", *seconds, *pid);
          },
          &paths);
      if (!s.ok()) return fail(s);
      std::printf("%s\n", paths.c_str());
      return 0;
    };
  });
}

}  // namespace gpuprobe::tools
