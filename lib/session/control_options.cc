#include "session/control_options.h"

#include <iterator>
#include <string>
#include <string_view>

#include "base/option_values.h"

namespace gpuprobe::session {
namespace {

Status apply_control(std::string_view v, ControlOptions& c) {
  if (!base::parse_switch(v, &c.socket)) return base::bad_value("control", v, "on or off");
  return {};
}

constexpr base::OptionSpec<ControlOptions> kOptions[] = {
    {"control", "on|off",
     [](const ControlOptions& c) { return std::string(c.socket ? "on" : "off"); },
     "a control socket, PID.sock in a directory of this user's alone ($XDG_RUNTIME_DIR/gpuprobe, "
     "else /run/user/UID/gpuprobe, else /tmp/gpuprobe-UID; GPUPROBE_CONTROL_DIR names another) "
     "through which "
     "`gpuprobe capture PID` asks the session for a window of full detail; off: none (POST "
     "/capture on the metrics port still can)",
     apply_control},
};

}  // namespace

const base::OptionTable<ControlOptions>& control_options() {
  static constexpr base::OptionTable<ControlOptions> kTable{kOptions, std::size(kOptions)};
  return kTable;
}

}  // namespace gpuprobe::session
