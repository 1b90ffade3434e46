// `gpuprobe report FILE|DIR`: where time went and why latency jittered; a directory holds a
// trace per rank, compared side by side with stragglers flagged, or is a flight recorder dump,
// explained from the trigger that wrote it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/ranks.h"
#include "analysis/step_window.h"
#include "analysis/trace_report.h"
#include "readers/torch_flight_recorder_reader.h"
#include "readers/trace_file.h"
#include "tools/collective_report.h"
#include "tools/commands/command.h"
#include "tools/flight_dump.h"
#include "tools/report_compare.h"
#include "tools/report_output.h"

namespace gpuprobe::tools {
namespace {

struct ReportArgs {
  std::string file;
  bool json = false;
  bool flight_recorder = false;
  std::string merge;
  std::string html;
  std::string steps;
  double straggler_ratio = 1.1;
  analysis::ReportOptions options;
  TextOptions text;
};

// The steps' span of one trace, found by a first pass over it (as HTA analyses chosen
// iterations); each trace of a directory has its own.
int step_window(const std::string& trace, long long first, long long last,
                analysis::ReportOptions* options) {
  analysis::StepWindow window(first, last);
  if (Status s = readers::read_trace_file(trace, window); !s.ok()) return fail(s);
  if (!window.found()) {
    std::fprintf(stderr, "gpuprobe: %s has no ProfilerStep#%lld..#%lld\n", trace.c_str(), first,
                 last);
    return 1;
  }
  options->window_begin_ns = window.begin_ns;
  options->window_end_ns = window.end_ns;
  return 0;
}

int run_report(const ReportArgs& args) {
  if (args.flight_recorder) return run_collective_report(args.file, args.json, args.merge);
  long long first = 0, last = -1;
  if (!args.steps.empty() &&
      (std::sscanf(args.steps.c_str(), "%lld-%lld", &first, &last) != 2 || first > last)) {
    std::fprintf(stderr, "gpuprobe: --steps takes FIRST-LAST, e.g. 2-5\n");
    return 2;
  }
  const auto options_for = [&](const std::string& trace, analysis::ReportOptions* o) {
    *o = args.options;
    return args.steps.empty() ? 0 : step_window(trace, first, last, o);
  };
  FlightDump dump;
  const bool is_dump = is_flight_dump(args.file);
  if (is_dump) {
    if (Status s = read_flight_dump(args.file, &dump); !s.ok()) return fail(s);
  }
  if (!is_dump && std::filesystem::is_directory(args.file)) {
    // Several ranks: a report per trace file, side by side, stragglers flagged.
    const std::vector<std::string> files = trace_files_in(args.file);
    std::vector<std::unique_ptr<analysis::TraceReport>> reports;
    std::vector<analysis::RankInput> ranks;
    for (const std::string& f : files) {
      analysis::ReportOptions rank_options;
      if (int rc = options_for(f, &rank_options); rc != 0) return rc;
      reports.push_back(std::make_unique<analysis::TraceReport>(rank_options));
      if (Status s = readers::read_trace_file(f, *reports.back()); !s.ok()) return fail(s);
      ranks.push_back({f, &reports.back()->result()});
    }
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const analysis::RankInput& a, const analysis::RankInput& b) {
                       return a.report->rank < b.report->rank;
                     });
    const std::vector<analysis::RankRow> rows = analysis::rank_rows(ranks, args.straggler_ratio);
    if (!args.html.empty()) return write_page(args.html, ranks_html(rows));
    if (args.json) {
      std::printf("%s\n", analysis::ranks_json(rows).c_str());
    } else {
      print_ranks(rows, stdout);
      const std::size_t fr_dumps = readers::torch_fr_dump_files(args.file).size();
      if (fr_dumps > 0)
        std::printf(
            "this directory also holds PyTorch flight recorder dumps of %zu rank%s: "
            "gpuprobe report --torch-flight-recorder %s\n",
            fr_dumps, fr_dumps == 1 ? "" : "s", args.file.c_str());
    }
    return 0;
  }
  const std::string& trace = is_dump ? dump.trace : args.file;
  analysis::ReportOptions options;
  if (int rc = options_for(trace, &options); rc != 0) return rc;
  if (is_dump) apply_trigger(dump, &options);
  if (!args.html.empty() && !report_page_available()) {
    std::fprintf(stderr,
                 "gpuprobe: this build has no report page: it inlines libjs-dygraphs, which was "
                 "not installed when it was built (apt install libjs-dygraphs, then rebuild)\n");
    return 1;
  }
  options.timeline = !args.html.empty();
  options.text = args.text;
  analysis::TraceReport sink(options);
  const Status s = readers::read_trace_file(trace, sink);
  if (!s.ok()) return fail(s);
  if (!args.html.empty())
    return write_page(args.html, report_html(sink.result(), sink.json(-1), args.text));
  if (args.json) {
    if (!is_dump) {
      std::printf("%s\n", sink.json().c_str());
      return 0;
    }
    nlohmann::json report = nlohmann::json::parse(sink.json());
    report["dump"] = dump_json(dump);
    // The dump's name and paths come from file names, which need not be UTF-8.
    std::printf("%s\n",
                report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  if (is_dump) print_dump_header(dump, stdout);
  print_report(sink.result(), args.text, stdout);
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandRun* run) {
  CLI::App* cmd = app.add_subcommand(
      "report",
      "where time went and why latency jittered: kernel and range tables, GPU idle breakdown, "
      "latency percentiles, outliers and what overlapped them; DIR: a trace per rank, "
      "stragglers flagged; a dump: what its trigger fired on, explained; --torch-flight-recorder "
      "DIR: "
      "PyTorch's flight recorder dumps, the first collective a rank never joined");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("FILE", args->file,
                  "a trace, a directory of traces (one per rank), or a flight recorder dump")
      ->required();
  cmd->add_flag("--json", args->json, "the report as JSON (schema in docs/report.md)");
  CLI::Option* flight_recorder = cmd->add_flag(
      "--torch-flight-recorder,--flight-recorder", args->flight_recorder,
      "DIR holds PyTorch's flight recorder dumps (TORCH_FR_BUFFER_SIZE; not gpuprobe's own "
      "flight=, whose dumps are read without a flag), one per rank: match their collectives and "
      "sends, name the first that not every rank joined, and place it on the timelines of "
      "gpuprobe's traces in DIR (--flight-recorder: the same, its earlier name)");
  cmd->add_option(
         "--merge", args->merge,
         "with --torch-flight-recorder: write each rank's gpuprobe trace in DIR into OUTDIR, "
         "with that rank's flight recorder entries on a thread per process group and "
         "the first mismatch marked")
      ->type_name("OUTDIR")
      ->needs(flight_recorder);
  cmd->add_option("--html", args->html, "write the report as an HTML page with plots")
      ->type_name("OUT.html");
  cmd->add_option("--limit", args->text.limit, "rows per table")->type_name("N");
  cmd->add_option("--sort", args->text.sort, "the order of the tables")
      ->type_name("KEY")
      ->check(CLI::IsMember({"total", "calls", "mean", "max", "p99"}));
  cmd->add_option("--steps", args->steps, "only the time of these steps")->type_name("FIRST-LAST");
  cmd->add_option("--latency", args->options.latency_name,
                  "the range whose outliers are explained (default: chosen from the trace)")
      ->type_name("RANGE");
  cmd->add_option("--threshold-ms", args->options.outlier_threshold_ms,
                  "a range above this many ms is an outlier")
      ->type_name("MS");
  cmd->add_option("--straggler-ratio", args->straggler_ratio,
                  "DIR: a rank whose work outside collectives exceeds the others' median by this "
                  "ratio (above 1) is a straggler")
      ->type_name("R")
      ->check(CLI::Validator(
          [](std::string& v) {
            char* end = nullptr;
            const double r = std::strtod(v.c_str(), &end);
            return end != v.c_str() && *end == '\0' && r > 1 ? std::string()
                                                             : "takes a number above 1, e.g. 1.1";
          },
          ""))
      ->capture_default_str();
  cmd->callback([args, run] { *run = [args] { return run_report(*args); }; });
}

}  // namespace gpuprobe::tools
