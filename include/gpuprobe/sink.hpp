/// @file sink.hpp
/// @brief `Sink`, the output interface every format implements, and register_sink(). What a
/// sink consumes — events, the time base, TraceInfo, Stats — is trace_model.hpp.
///
/// Sinks run on the collector thread, never on a recording thread, so they may allocate, format
/// and do I/O. A sink is called by one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "gpuprobe/status.hpp"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe {

/// An output. The collector calls open() once, write() for each batch, and close() once, all on
/// the collector thread. A failing call returns an error; the collector reports it once, stops
/// calling that sink, and keeps the others going.
class Sink {
 public:
  virtual ~Sink() = default;

  /// Prepares the output, e.g. creates a temporary file. An error here is reported before the
  /// session starts recording.
  virtual Status open(const TraceInfo& info) = 0;

  /// Consumes events. The batch and its events are valid only during the call.
  virtual Status write(const EventBatch& batch) = 0;

  /// Facts a trace reader learns after open(): the names of categories, given before the first
  /// event in such a category, and what a file states only at its end (gpuprobe's own traces
  /// state the clock and the config in their closing summary), given just before close(). A
  /// recording session calls it only to give the devices of a GPU source that learnt them after
  /// open() (CUPTI started at CUDA's initialization). The default ignores them.
  virtual void update_info(const TraceInfo& info) { (void)info; }

  /// Finishes the output with the final statistics and the final time base.
  virtual Status close(const Stats& stats, const TimeBase& time) = 0;
};

/// Creates a sink from the value of its config key, e.g. "trace.json" for `chrome=trace.json`.
using SinkFactory = std::function<std::unique_ptr<Sink>(std::string_view value)>;

/// Makes `key=value` in config strings create a sink with `factory`. `value_hint` and `help` are
/// shown by Session::help(). Fails if `key` is taken by an option or another sink.
Status register_sink(std::string_view key, std::string_view value_hint, std::string_view help,
                     SinkFactory factory);

}  // namespace gpuprobe
