// `gpuprobe info FILE`: what a trace holds.
#include <memory>
#include <string>

#include "readers/trace_file.h"
#include "tools/commands/command.h"
#include "tools/trace_summary_sink.h"

namespace gpuprobe::tools {

void add_info_command(CLI::App& app, CommandRun* run) {
  CLI::App* cmd = app.add_subcommand(
      "info", "what a trace holds: duration, events per category, steps, threads, devices, drops");
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file,
                  "a trace: Chrome JSON, Perfetto, a flight window or an MLIR timing report, "
                  "gzipped or not")
      ->required();
  cmd->callback([file, run] {
    *run = [file] {
      TraceSummarySink sink(stdout);
      readers::TraceFormat format = readers::TraceFormat::kChrome;
      const Status s = readers::read_trace_file(*file, sink, {}, &format);
      if (!s.ok()) return fail(s);
      const char* names[] = {"Chrome trace JSON", "Perfetto protobuf", "gpuprobe flight window",
                             "MLIR pass timing report"};
      std::printf("format       %s\n", names[static_cast<int>(format)]);
      return 0;
    };
  });
}

}  // namespace gpuprobe::tools
