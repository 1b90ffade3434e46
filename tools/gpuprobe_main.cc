// The `gpuprobe` command: look into and convert the traces gpuprobe writes (and Kineto's).
//
//   gpuprobe info FILE            what a trace holds
//   gpuprobe dump FILE            every event as a line of text
//   gpuprobe convert IN OUT       Chrome JSON <-> Perfetto; either -> TensorBoard
//   gpuprobe report FILE|DIR ...  where time went and why latency jittered (DIR: per rank)
//   gpuprobe diff A B             what changed between two traces
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/sink_registry.h"
#include "gpuprobe/version.hpp"
#include "readers/trace_file.h"
#include "report/trace_report.h"
#include "session/builtin_sinks.h"
#include "tools/report_compare.h"
#include "tools/report_output.h"
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

// Writes an HTML page; 0, or 1 with the reason on stderr.
int write_page(const std::string& path, const std::string& page) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  const bool written = f != nullptr && std::fwrite(page.data(), 1, page.size(), f) == page.size();
  const bool closed = f != nullptr && std::fclose(f) == 0;
  if (!written || !closed) return fail(Status::Error("cannot write '" + path + "'"));
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

int report_command(const std::vector<std::string>& args) {
  report::ReportOptions options;
  TextOptions text;
  bool json = false;
  std::string file, steps, html;
  double straggler_ratio = 1.1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--json") {
      json = true;
    } else if (a == "--html" && has_value) {
      html = args[++i];
    } else if (a == "--limit" && has_value) {
      text.limit = std::strtoul(args[++i].c_str(), nullptr, 10);
    } else if (a == "--sort" && has_value) {
      text.sort = args[++i];
      if (text.sort != "total" && text.sort != "calls" && text.sort != "mean" &&
          text.sort != "max" && text.sort != "p99") {
        std::fprintf(stderr, "gpuprobe: --sort takes total, calls, mean, max or p99\n");
        return 2;
      }
    } else if (a == "--latency" && has_value) {
      options.latency_name = args[++i];
    } else if (a == "--steps" && has_value) {
      steps = args[++i];
    } else if (a == "--straggler-ratio" && has_value) {
      straggler_ratio = std::strtod(args[++i].c_str(), nullptr);
      if (!(straggler_ratio > 1)) {
        std::fprintf(stderr, "gpuprobe: --straggler-ratio takes a number above 1, e.g. 1.1\n");
        return 2;
      }
    } else if (a == "--threshold-ms" && has_value) {
      options.outlier_threshold_ms = std::strtod(args[++i].c_str(), nullptr);
    } else if (a.rfind("--", 0) != 0 && file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "gpuprobe: report: unknown or incomplete option '%s'\n", a.c_str());
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(
        stderr,
        "usage: gpuprobe report FILE [--json] [--limit N] [--sort total|calls|mean|max|p99] "
        "[--steps FIRST-LAST] [--latency RANGE] [--threshold-ms MS] [--straggler-ratio R] "
        "[--html OUT.html]\n");
    return 2;
  }
  long long first = 0, last = -1;
  if (!steps.empty() &&
      (std::sscanf(steps.c_str(), "%lld-%lld", &first, &last) != 2 || first > last)) {
    std::fprintf(stderr, "gpuprobe: --steps takes FIRST-LAST, e.g. 2-5\n");
    return 2;
  }
  // The steps' span of one trace, found by a first pass over it (as HTA analyses chosen
  // iterations); each trace of a directory has its own.
  const auto window_of = [&](const std::string& trace, report::ReportOptions* o) -> int {
    if (steps.empty()) return 0;
    report::StepWindow window(first, last);
    if (Status s = readers::read_trace_file(trace, window); !s.ok()) return fail(s);
    if (!window.found()) {
      std::fprintf(stderr, "gpuprobe: %s has no ProfilerStep#%lld..#%lld\n", trace.c_str(), first,
                   last);
      return 1;
    }
    o->window_begin_ns = window.begin_ns;
    o->window_end_ns = window.end_ns;
    return 0;
  };
  if (std::filesystem::is_directory(file)) {
    // Several ranks: a report per trace file, side by side, stragglers flagged.
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(file)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() &&
          (name.find(".json") != std::string::npos || name.find(".pftrace") != std::string::npos))
        files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<RankReport> ranks;
    for (const std::string& f : files) {
      report::ReportOptions rank_options = options;
      if (int rc = window_of(f, &rank_options); rc != 0) return rc;
      auto r = std::make_shared<report::TraceReport>(rank_options);
      if (Status s = readers::read_trace_file(f, *r); !s.ok()) return fail(s);
      ranks.push_back({f, r});
    }
    std::sort(ranks.begin(), ranks.end(), [](const RankReport& a, const RankReport& b) {
      return a.report->result().rank < b.report->result().rank;
    });
    const std::vector<RankRow> rows = rank_rows(ranks, straggler_ratio);
    if (!html.empty()) return write_page(html, ranks_html(rows));
    if (json) {
      std::printf("%s\n", ranks_json(rows).c_str());
    } else {
      print_ranks(rows, stdout);
    }
    return 0;
  }
  if (int rc = window_of(file, &options); rc != 0) return rc;
  report::TraceReport sink(options);
  const Status s = readers::read_trace_file(file, sink);
  if (!s.ok()) return fail(s);
  if (!html.empty()) {
    return write_page(html, report_html(sink.result(), text));
  } else if (json) {
    std::printf("%s\n", report_json(sink.result()).c_str());
  } else {
    print_report(sink.result(), text, stdout);
  }
  return 0;
}

int diff_command(const std::vector<std::string>& args) {
  bool json = false;
  std::size_t limit = 20;
  std::string html;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--html" && i + 1 < args.size()) {
      html = args[++i];
    } else if (args[i] == "--limit" && i + 1 < args.size()) {
      limit = std::strtoul(args[++i].c_str(), nullptr, 10);
    } else if (args[i].rfind("--", 0) != 0) {
      files.push_back(args[i]);
    } else {
      std::fprintf(stderr, "gpuprobe: diff: unknown option '%s'\n", args[i].c_str());
      return 2;
    }
  }
  if (files.size() != 2) {
    std::fprintf(stderr, "usage: gpuprobe diff A B [--json | --html OUT.html] [--limit N]\n");
    return 2;
  }
  report::TraceReport a, b;
  if (Status s = readers::read_trace_file(files[0], a); !s.ok()) return fail(s);
  if (Status s = readers::read_trace_file(files[1], b); !s.ok()) return fail(s);
  if (!html.empty()) return write_page(html, diff_html(a.result(), b.result(), limit));
  if (json) {
    std::printf("%s\n", diff_json(a.result(), b.result()).c_str());
  } else {
    print_diff(a.result(), b.result(), limit, stdout);
  }
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
    {"report", "FILE|DIR ...",
     "where time went and why latency jittered: kernel and range tables, GPU idle breakdown, "
     "latency percentiles, outliers and what overlapped them; --json, --limit N, --sort KEY, "
     "--steps FIRST-LAST, --latency RANGE, --threshold-ms MS, --html OUT.html; DIR: a trace "
     "per rank, stragglers flagged (--straggler-ratio R, default 1.1)",
     report_command},
    {"diff", "A B ...",
     "per-kernel and per-range changes from trace A to trace B; --json, --html OUT.html, "
     "--limit N",
     diff_command},
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
    const bool options = std::strstr(c.args, "...") != nullptr;
    const std::size_t wanted = std::strchr(c.args, ' ') != nullptr && !options ? 2 : 1;
    if (options ? args.size() < wanted : args.size() != wanted) {
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
