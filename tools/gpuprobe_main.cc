// The `gpuprobe` command: run a program under gpuprobe; look into and convert the traces
// gpuprobe writes (and Kineto's).
//
//   gpuprobe info FILE            what a trace holds
//   gpuprobe dump FILE            every event as a line of text
//   gpuprobe convert IN OUT       Chrome JSON <-> Perfetto; either -> TensorBoard
//   gpuprobe report FILE|DIR ...  where time went and why latency jittered (DIR: per rank)
//   gpuprobe diff A B             what changed between two traces
//   gpuprobe run [--] CMD ARGS    run a program under gpuprobe (python -m gpuprobe run)
//   gpuprobe capture PID          a window of full detail from a process that runs gpuprobe
//
// Each command is a file in tools/commands/ that declares its arguments once, on its CLI11
// subcommand: parsing, arity, usage and --help all come from that declaration.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "gpuprobe/version.hpp"
#include "tools/commands/command.h"

namespace gpuprobe::tools {
namespace {

int main_impl(int argc, char** argv) {
  CLI::App app("gpuprobe " GPUPROBE_VERSION_STRING
               ": run programs under gpuprobe; look into and convert GPU traces (Chrome JSON, "
               "Perfetto; gzipped or not)",
               "gpuprobe");
  app.set_version_flag("--version", "gpuprobe " GPUPROBE_VERSION_STRING);
  app.require_subcommand(1);
  CommandRun run;
  // `gpuprobe run [OPTIONS] -- CMD ARGS`: CLI11 would give what follows "--" to the top command;
  // it is the program's, handed to run as it is ("--" inside the program's own arguments stays).
  std::vector<char*> args(argv, argv + argc);
  std::vector<std::string> program;
  if (argc >= 2 && std::strcmp(argv[1], "run") == 0) {
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--") {
        program.assign(argv + i + 1, argv + argc);
        args.resize(i);
        break;
      }
      if (a == "-o" || a == "-c" || a == "--output" || a == "--config") {
        ++i;  // its value
      } else if (a.empty() || a[0] != '-') {
        break;  // the program's name: the rest is the program's already
      }
    }
  }
  add_info_command(app, &run);
  add_dump_command(app, &run);
  add_convert_command(app, &run);
  add_report_command(app, &run);
  add_diff_command(app, &run);
  add_capture_command(app, &run);
  add_run_command(app, &run, program);
  // Errors say who speaks and where to look, as gpuprobe's other messages do.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("gpuprobe: ") + e.what() + " (see gpuprobe --help)\n";
  });
  // `gpuprobe help` is `gpuprobe --help`.
  char help[] = "--help";
  if (argc == 2 && std::strcmp(argv[1], "help") == 0) args[1] = help;
  const auto is_command = [&app](const char* name) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == name) return true;
    }
    return false;
  };
  if (argc >= 2 && argv[1][0] != '-' && std::strcmp(argv[1], "help") != 0 && !is_command(argv[1])) {
    std::fprintf(stderr, "gpuprobe: unknown command '%s' (see gpuprobe --help)\n", argv[1]);
    return 2;
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    // Help and version print and succeed; a usage error prints why and exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run ? run() : 2;
}

}  // namespace
}  // namespace gpuprobe::tools

// Whatever a command meets — a file that needs more memory than the process may have, a bug —
// ends as one line and exit status 1, never an abort.
int main(int argc, char** argv) {
  try {
    return gpuprobe::tools::main_impl(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gpuprobe: out of memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe: internal error: %s\n", e.what());
  }
  return 1;
}
