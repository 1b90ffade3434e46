// The composition root's list of outputs: the sinks gpuprobe itself provides, registered by
// name in core's SinkRegistry. Registered explicitly, on first need, rather than by static
// initializers, which a static library drops when nothing refers to their object file.
#pragma once

#include <memory>

#include "gpuprobe/sink.hpp"
#include "gpuprobe/status.hpp"
#include "metrics/metrics_options.h"
#include "session/session_config.h"

namespace gpuprobe::session {

// Creates the output `spec` names for a session: the registered sink, except that the metrics
// outputs export the range names `ranges` selects (the session's metrics_names=,
// metrics_ranges=), handed in rather than kept process-wide.
Status create_output(const SinkSpec& spec, const metrics::RangeSelection& ranges,
                     std::unique_ptr<Sink>* out);

// Registers chrome=, perfetto= and tensorboard=, once per process, ahead of any sink a program
// adds. Everything that reads a config or lists the sinks calls it first. Never throws.
void register_builtin_sinks() noexcept;

}  // namespace gpuprobe::session
