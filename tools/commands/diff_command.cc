// `gpuprobe diff A B`: per-kernel and per-range changes from trace A to trace B.
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/trace_report.h"
#include "readers/trace_file.h"
#include "tools/commands/command.h"
#include "tools/report_compare.h"

namespace gpuprobe::tools {
namespace {

struct DiffArgs {
  std::string a, b;
  bool json = false;
  std::string html;
  std::size_t limit = 20;
};

int run_diff(const DiffArgs& args) {
  analysis::TraceReport a, b;
  if (Status s = readers::read_trace_file(args.a, a); !s.ok()) return fail(s);
  if (Status s = readers::read_trace_file(args.b, b); !s.ok()) return fail(s);
  if (!args.html.empty())
    return write_page(args.html, diff_html(a.result(), b.result(), args.limit));
  if (args.json) {
    std::printf("%s\n", analysis::diff_json(a.result(), b.result()).c_str());
  } else {
    print_diff(a.result(), b.result(), args.limit, stdout);
  }
  return 0;
}

}  // namespace

void add_diff_command(CLI::App& app, CommandRun* run) {
  CLI::App* cmd =
      app.add_subcommand("diff", "per-kernel and per-range changes from trace A to trace B");
  auto args = std::make_shared<DiffArgs>();
  cmd->add_option("A", args->a, "the trace before")->required();
  cmd->add_option("B", args->b, "the trace after")->required();
  cmd->add_flag("--json", args->json, "the changes as JSON");
  cmd->add_option("--html", args->html, "write the changes as an HTML page")->type_name("OUT.html");
  cmd->add_option("--limit", args->limit, "rows per table")->type_name("N")->capture_default_str();
  cmd->callback([args, run] { *run = [args] { return run_diff(*args); }; });
}

}  // namespace gpuprobe::tools
