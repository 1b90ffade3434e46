// The on-demand control channel's option (`control=`), declared beside the channel
// (control_server.h); the session config (session_config.h) puts its table together with the
// other layers'.
#pragma once

#include "base/option_table.h"

namespace gpuprobe::session {

// What `control=` chooses.
struct ControlOptions {
  // A control socket (control_socket.h) through which `gpuprobe capture PID` reaches the session.
  bool socket = true;
};

// control=.
const base::OptionTable<ControlOptions>& control_options();

}  // namespace gpuprobe::session
