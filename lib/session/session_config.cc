#include "session/session_config.h"

#include "base/option_table.h"
#include "base/option_values.h"
#include "core/sink_registry.h"

namespace gpuprobe::session {
namespace {

// Every component's options, bound to the fields of `config` they fill, in the order help()
// lists them (names= stays after sched=, where it always was).
base::OptionSet options_of(SessionConfig* config) {
  base::OptionSet options;
  options.add(core::recording_options(), &config->recording);
  options.add(gpu::gpu_options(), &config->gpu);
  options.add(sched_options(), &config->sched);
  options.add(core::name_options(), &config->recording);
  options.add(metrics::metrics_options(), &config->metrics);
  options.add(flight::flight_options(), &config->flight);
  options.add(control_options(), &config->control);
  return options;
}

}  // namespace

Status parse_config(std::string_view text, SessionConfig* config) {
  return options_of(config).parse(text, [config](std::string_view key, std::string_view value) {
    if (!core::SinkRegistry::get().contains(key)) {
      return Status::Error("unknown config key " + base::quoted(key) +
                           " (see gpuprobe::Session::help())");
    }
    if (value.empty()) return Status::Error("config key " + base::quoted(key) + " needs a value");
    config->sinks.push_back(SinkSpec{std::string(key), std::string(value)});
    return Status();
  });
}

bool is_option_key(std::string_view key) {
  SessionConfig unused;
  return options_of(&unused).contains(key);
}

std::string config_help() {
  std::string out =
      "gpuprobe config: key=value pairs separated by ',' ('+' joins values inside a key).\n"
      "Outputs:\n";
  for (const core::SinkRegistry::Entry& sink : core::SinkRegistry::get().entries()) {
    base::append_help_line(&out, sink.key, sink.value_hint, "", sink.help);
  }
  out += "Options:\n";
  SessionConfig defaults;
  options_of(&defaults).append_help(&out);
  out +=
      "The environment variable GPUPROBE takes the same string and starts a session when the\n"
      "program starts; it stops at normal exit.\n";
  return out;
}

}  // namespace gpuprobe::session
