// The composition root's list of outputs: the sinks gpuprobe itself provides, registered by
// name in core's SinkRegistry. Registered explicitly, on first need, rather than by static
// initializers, which a static library drops when nothing refers to their object file.
#pragma once

#include "metrics/flight_metrics.h"

namespace gpuprobe::session {

// The range names the metrics outputs of the session that starts export (`metrics_names=`,
// `metrics_ranges=`): set before its sinks are created, which read it.
void set_metrics_selection(metrics::RangeSelection selection);

// Registers chrome=, perfetto= and tensorboard=, once per process, ahead of any sink a program
// adds. Everything that reads a config or lists the sinks calls it first. Never throws.
void register_builtin_sinks() noexcept;

}  // namespace gpuprobe::session
