// `gpuprobe dump FILE`: every event of a trace as a line of text.
#include <memory>
#include <string>

#include "readers/trace_file.h"
#include "tools/commands/command.h"
#include "tools/event_lines_sink.h"

namespace gpuprobe::tools {

void add_dump_command(CLI::App& app, CommandRun* run) {
  CLI::App* cmd = app.add_subcommand("dump", "every event as a line of text, in file order");
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file,
                  "a trace: Chrome JSON, Perfetto, a flight window or an MLIR timing report, "
                  "gzipped or not")
      ->required();
  cmd->callback([file, run] {
    *run = [file] {
      EventLinesSink sink(stdout);
      const Status s = readers::read_trace_file(*file, sink);
      return s.ok() ? 0 : fail(s);
    };
  });
}

}  // namespace gpuprobe::tools
