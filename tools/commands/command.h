// The subcommands of `gpuprobe`, one file each. A command declares its arguments and options on
// its CLI11 subcommand — that one declaration drives parsing, arity, usage and --help — and
// leaves in `run` what to do once the command line parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::tools {

// What a command does once parsed; returns the exit status (0, 1 for a failure, 2 for a usage
// error the parser could not see).
using CommandRun = std::function<int()>;

void add_info_command(CLI::App& app, CommandRun* run);
void add_dump_command(CLI::App& app, CommandRun* run);
void add_convert_command(CLI::App& app, CommandRun* run);
void add_report_command(CLI::App& app, CommandRun* run);
void add_diff_command(CLI::App& app, CommandRun* run);
// `gpuprobe capture PID`: an on-demand window of a running session (session/control_socket.h).
void add_capture_command(CLI::App& app, CommandRun* run);
// `after_dashes`: the program and its arguments where they followed "--" (main splits them off).
void add_run_command(CLI::App& app, CommandRun* run, std::vector<std::string> after_dashes);

// Prints "gpuprobe: <message>" to stderr; returns 1, the exit status of a failure.
int fail(const Status& s);

// Writes an HTML page; 0, or 1 with the reason on stderr.
int write_page(const std::string& path, const std::string& page);

// The sink for an output name: .json[.gz] Chrome, .pftrace/.perfetto-trace[.gz] Perfetto, a
// directory (existing, or ending in '/') TensorBoard; empty for none of these.
std::string output_kind(const std::string& out);

// The trace files of a directory of ranks (Chrome JSON or Perfetto, gzipped or not), sorted;
// none when it cannot be read.
std::vector<std::string> trace_files_in(const std::string& dir);

}  // namespace gpuprobe::tools
