// The `gpuprobe` command: look into and convert the traces gpuprobe writes (and Kineto's).
//
//   gpuprobe info FILE            what a trace holds
//   gpuprobe dump FILE            every event as a line of text
//   gpuprobe convert IN OUT       Chrome JSON <-> Perfetto; either -> TensorBoard
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/sink_registry.h"
#include "gpuprobe/version.hpp"
#include "readers/trace_file.h"
#include "tools/trace_dump_sink.h"
#include "tools/trace_summary_sink.h"

namespace gpuprobe::tools {
namespace {

struct Command {
  const char* name;
  const char* args;
  const char* help;
  int (*run)(const std::vector<std::string>& args);
};

int fail(const Status& s) {
  std::fprintf(stderr, "gpuprobe: %s\n", s.message().c_str());
  return 1;
}

int info(const std::vector<std::string>& args) {
  TraceSummarySink sink(stdout);
  readers::TraceFormat format = readers::TraceFormat::kChrome;
  const Status s = readers::read_trace_file(args[0], sink, {}, &format);
  if (!s.ok()) return fail(s);
  std::printf("format       %s\n",
              format == readers::TraceFormat::kChrome ? "Chrome trace JSON" : "Perfetto protobuf");
  return 0;
}

int dump(const std::vector<std::string>& args) {
  TraceDumpSink sink(stdout);
  const Status s = readers::read_trace_file(args[0], sink);
  return s.ok() ? 0 : fail(s);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The sink for an output name: .json[.gz] Chrome, .pftrace/.perfetto-trace[.gz] Perfetto, a
// directory (existing, or ending in '/') TensorBoard.
std::string output_kind(const std::string& out) {
  std::string plain = ends_with(out, ".gz") ? out.substr(0, out.size() - 3) : out;
  if (ends_with(plain, ".json")) return "chrome";
  if (ends_with(plain, ".pftrace") || ends_with(plain, ".perfetto-trace")) return "perfetto";
  if (ends_with(out, "/") || std::filesystem::is_directory(out)) return "tensorboard";
  return "";
}

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

int convert(const std::vector<std::string>& args) {
  const std::string& in = args[0];
  const std::string& out = args[1];
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

const Command kCommands[] = {
    {"info", "FILE",
     "what a trace holds: duration, events per category, steps, threads, devices, drops", info},
    {"dump", "FILE", "every event as a line of text, in file order", dump},
    {"convert", "IN OUT",
     "convert a trace: Chrome JSON <-> Perfetto, either -> TensorBoard; OUT's name picks the "
     "format (.json[.gz], .pftrace[.gz], DIR/)",
     convert},
};

void usage(std::FILE* f) {
  std::fprintf(
      f,
      "gpuprobe %s: look into and convert GPU traces (Chrome JSON, Perfetto; gzipped or not)\n\n",
      GPUPROBE_VERSION_STRING);
  for (const Command& c : kCommands) {
    std::fprintf(f, "  gpuprobe %-8s %-8s %s\n", c.name, c.args, c.help);
  }
}

int main_impl(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "help") == 0 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("gpuprobe %s\n", GPUPROBE_VERSION_STRING);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    const std::vector<std::string> args(argv + 2, argv + argc);
    const std::size_t wanted = std::strchr(c.args, ' ') != nullptr ? 2 : 1;
    if (args.size() != wanted) {
      std::fprintf(stderr, "usage: gpuprobe %s %s\n", c.name, c.args);
      return 2;
    }
    return c.run(args);
  }
  std::fprintf(stderr, "gpuprobe: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}

}  // namespace
}  // namespace gpuprobe::tools

int main(int argc, char** argv) { return gpuprobe::tools::main_impl(argc, argv); }
