// `gpuprobe convert IN OUT`: Chrome JSON <-> Perfetto, either -> TensorBoard; OUT's name picks
// the format.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "core/sink_registry.h"
#include "readers/trace_file.h"
#include "session/builtin_sinks.h"
#include "tools/commands/command.h"

namespace gpuprobe::tools {
namespace {

// Progress on stderr: redrawn in place on a terminal, a line every 10 s otherwise.
class Progress {
 public:
  explicit Progress(std::string what) : what_(std::move(what)), tty_(isatty(2) != 0) {}
  void operator()(double fraction, std::uint64_t events) {
    const auto now = std::chrono::steady_clock::now();
    const auto every = tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(10000);
    if (now - start_ < std::chrono::seconds(1) || now - last_ < every) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "%s%s: %3.0f%% of the input, %.1f M events%s", tty_ ? "\r" : "",
                 what_.c_str(), fraction * 100, static_cast<double>(events) * 1e-6,
                 tty_ ? "" : "\n");
  }
  void done() {
    if (shown_ && tty_) std::fputc('\n', stderr);
  }

 private:
  std::string what_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_;
};

int convert(const std::string& in, const std::string& out) {
  const std::string kind = output_kind(out);
  if (kind.empty()) {
    std::fprintf(stderr,
                 "gpuprobe: %s: name the output .json or .json.gz (Chrome), .pftrace or "
                 ".pftrace.gz (Perfetto), or a directory ending in '/' (TensorBoard)\n",
                 out.c_str());
    return 2;
  }
  const std::filesystem::path parent = std::filesystem::path(out).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec)
    return fail(
        Status::Error("cannot create directory '" + parent.string() + "': " + ec.message()));
  std::unique_ptr<Sink> sink;
  session::register_builtin_sinks();
  if (Status s = core::SinkRegistry::get().create(kind, out, &sink); !s.ok()) return fail(s);
  Progress progress("converting " + in);
  readers::ProgressFn report = [&](double f, std::uint64_t n) { progress(f, n); };
  const Status s = readers::read_trace_file(in, *sink, report);
  progress.done();
  if (!s.ok()) {
    fail(s);
    if (std::filesystem::exists(out))
      std::fprintf(stderr, "gpuprobe: %s holds the events read before the error\n", out.c_str());
    return 1;
  }
  std::printf("wrote %s (%s)\n", out.c_str(), kind.c_str());
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, CommandRun* run) {
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "convert a trace: Chrome JSON <-> Perfetto, either -> TensorBoard; OUT's name picks the "
      "format (.json[.gz], .pftrace[.gz], DIR/)");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("IN", *in, "the trace to read")->required();
  cmd->add_option("OUT", *out, "the file (or directory) to write")->required();
  cmd->callback([in, out, run] { *run = [in, out] { return convert(*in, *out); }; });
}

}  // namespace gpuprobe::tools
