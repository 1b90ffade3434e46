// `gpuprobe run [-o PATH] [-c CONFIG] [--] CMD ARGS...`: runs a program under gpuprobe, as
// `nsys profile` does. The work is python/gpuprobe/run.py's (`python -m gpuprobe run`), the one
// description of the child's environment (GPUPROBE, and the sitecustomize that traces unmodified
// Python programs): this command replaces itself with that Python (GPUPROBE_PYTHON, else the
// python3 beside this executable, as `pip install` puts them, else python3 on PATH), telling it
// to summarize the traces with this very executable (GPUPROBE_CLI). Exit status, bad config and
// a missing program are therefore the runner's: the program's status (a signal death as 128+N),
// 2 and nothing started, 127.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tools/commands/command.h"

namespace gpuprobe::tools {
namespace {

std::string this_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

std::string python_to_run(const std::string& self) {
  if (const char* given = std::getenv("GPUPROBE_PYTHON"); given != nullptr && *given != '\0')
    return given;
  if (!self.empty()) {
    const std::filesystem::path beside = std::filesystem::path(self).parent_path() / "python3";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "python3";
}

int exec_runner(const std::string& output, const std::string& config,
                std::vector<std::string> command) {
  if (command.empty())
    return fail(Status::Error("run: no program given (see gpuprobe run --help)"));
  const std::string self = this_executable();
  const std::string python = python_to_run(self);
  if (!self.empty()) ::setenv("GPUPROBE_CLI", self.c_str(), 1);
  // The runner itself records nothing: a GPUPROBE of the caller's would start a session in it
  // at `import gpuprobe` (the child's GPUPROBE is the runner's to set).
  ::unsetenv("GPUPROBE");
  std::vector<std::string> args = {python, "-m", "gpuprobe", "run"};
  if (!output.empty()) args.insert(args.end(), {"-o", output});
  if (!config.empty()) args.insert(args.end(), {"-c", config});
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "gpuprobe: run needs Python with gpuprobe installed: %s: %s\n",
               python.c_str(), std::strerror(errno));
  return 127;
}

}  // namespace

void add_run_command(CLI::App& app, CommandRun* run, std::vector<std::string> after_dashes) {
  CLI::App* cmd = app.add_subcommand(
      "run",
      "run a program under gpuprobe: Python programs unmodified (steps, module ranges, GC, "
      "compiles, DataLoader waits); prints the traces written and a summary of each");
  auto output = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  cmd->add_option("-o,--output", *output,
                  "Chrome trace path; %p is each process's pid, %h the host "
                  "[gpuprobe-%p.json]");
  cmd->add_option("-c,--config", *config,
                  "more GPUPROBE config keys, e.g. perfetto=t.pftrace,ring=65536");
  cmd->footer(
      "CMD ARGS...: the program, after the options (or after --). Parts off by environment: "
      "GPUPROBE_RUN_STEPS=0, GPUPROBE_RUN_GC=0, GPUPROBE_RUN_COMPILE=0, GPUPROBE_RUN_DATA=0, "
      "GPUPROBE_RUN_MODULES=0, GPUPROBE_RUN_NVTX=0 (gpuprobe as the NVTX tool); "
      "GPUPROBE_RUN_DEPTH=N levels of module ranges [2].");
  // Everything from the program's name on is the program's, its options included.
  cmd->prefix_command();
  cmd->callback([cmd, output, config, run, after_dashes] {
    std::vector<std::string> command = cmd->remaining();
    command.insert(command.end(), after_dashes.begin(), after_dashes.end());
    *run = [output, config, command] { return exec_runner(*output, *config, command); };
  });
}

}  // namespace gpuprobe::tools
