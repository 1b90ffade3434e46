/// @file gpuprobe.hpp
/// @brief The one header to include.
///
/// @code
/// #include <gpuprobe/gpuprobe.hpp>
///
/// gpuprobe::Session session("chrome=trace.json");
/// {
///   GPUPROBE_RANGE("load_batch");
///   gpuprobe::counter("queue_depth", 12.0);
/// }
/// session.stop();
/// @endcode
#pragma once

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/range.hpp"
#include "gpuprobe/session.hpp"
#include "gpuprobe/sink.hpp"
#include "gpuprobe/status.hpp"
#include "gpuprobe/trace_model.hpp"
#include "gpuprobe/version.hpp"
