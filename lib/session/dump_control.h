// The running session's flight recorder, as the ways of asking it for a dump reach it:
// gpuprobe::dump(), gpuprobe.dump(), and the metrics endpoint's POST /dump (through the hooks
// the session gives the metrics outputs, which do not know the recorder).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "flight/flight_recorder.h"
#include "gpuprobe/status.hpp"
#include "metrics/flight_metrics.h"

namespace gpuprobe::session {

// The recorder of the session that starts now (nullptr: it has none). Its figures stay readable
// until the next session starts, so that the metrics outputs' last write, at stop, has them.
void set_active_flight(std::shared_ptr<flight::FlightRecorder> recorder);

// The session is stopping: requests are told there is no recorder from now on.
void stop_accepting_dumps();

// Asks the active recorder for a dump; an error when there is none or a limit holds it.
Status request_dump(std::string_view source, std::string_view reason, std::string* path);

// What the metrics outputs of a session with a flight recorder are given.
metrics::SessionHooks flight_hooks();

// fork()'s child: the parent's recorder has no thread here; it is forgotten, not stopped.
void forget_flight_in_child() noexcept;

}  // namespace gpuprobe::session
