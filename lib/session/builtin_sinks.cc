#include "session/builtin_sinks.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/sink_registry.h"
#include "core/thread_registry.h"
#include "metrics/metrics_endpoint.h"
#include "metrics/metrics_file_sink.h"
#include "session/capture_window.h"
#include "session/dump_control.h"
#include "sinks/chrome_trace_sink.h"
#include "sinks/perfetto_sink.h"
#include "sinks/tensorboard_sink.h"

namespace gpuprobe::session {
namespace {

// What the metrics outputs are given: the flight recorder's hooks, the rings' memory, and the
// range names the session's config selects.
metrics::SessionHooks metrics_hooks(const metrics::RangeSelection& ranges) {
  metrics::SessionHooks hooks = flight_hooks();
  hooks.ring_bytes = [] { return core::ThreadRegistry::get().allocated_bytes(); };
  hooks.capture = capture_hook();
  hooks.ranges = ranges;
  return hooks;
}

// The outputs made with the session's range selection; registered with the defaults' for a
// sink made outside a session.
struct MetricsOutput {
  const char* key;
  const char* value_hint;
  const char* help;
  std::unique_ptr<Sink> (*make)(std::string_view value, metrics::SessionHooks hooks);
};

const MetricsOutput kMetricsOutputs[] = {
    {"metrics", "[HOST:]PORT",
     "serve the metrics of metrics_file over HTTP, GET /metrics (OpenMetrics with exemplars when "
     "asked, else Prometheus text 0.0.4), POST /dump[?reason=TEXT] to the flight recorder and "
     "POST /capture[?seconds=N] for a window of full detail (gpuprobe capture), on 127.0.0.1 "
     "unless HOST is given; PORT 0 picks a free one",
     [](std::string_view value, metrics::SessionHooks hooks) -> std::unique_ptr<Sink> {
       return std::make_unique<metrics::MetricsEndpoint>(std::string(value), std::move(hooks));
     }},
    {"metrics_file", "PATH",
     "Prometheus metrics in the text format (range duration histograms by name, steps, GPU "
     "kernels and busy time, events and drops), rewritten at most once a second and at the end: "
     "node_exporter's textfile collector reads PATH ending in .prom",
     [](std::string_view path, metrics::SessionHooks hooks) -> std::unique_ptr<Sink> {
       return std::make_unique<metrics::MetricsFileSink>(std::string(path), std::move(hooks));
     }},
};

}  // namespace

Status create_output(const SinkSpec& spec, const metrics::RangeSelection& ranges,
                     std::unique_ptr<Sink>* out) {
  for (const MetricsOutput& m : kMetricsOutputs) {
    if (spec.key != m.key) continue;
    return core::SinkRegistry::create_with(
        [&m, &ranges](std::string_view value) { return m.make(value, metrics_hooks(ranges)); },
        spec.key, spec.value, out);
  }
  return core::SinkRegistry::get().create(spec.key, spec.value, out);
}

void register_builtin_sinks() noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      // A failure here would be a bug of this list (a key taken twice): the sink is then absent
      // and a config naming it says "unknown config key".
      const auto add = [](core::SinkRegistry::Entry entry) {
        static_cast<void>(core::SinkRegistry::get().add(std::move(entry), is_option_key));
      };
      add(core::SinkRegistry::Entry{
          "chrome", "PATH",
          "Chrome trace JSON as torch.profiler writes it (Perfetto UI, HTA, chrome://tracing); "
          "PATH ending in .gz writes gzip; PATH ending in / writes "
          "PATH<host>_<pid>.<ns>.pt.trace.json as torch.profiler's tensorboard_trace_handler "
          "does (PATH/+gz: the same, gzipped)",
          [](std::string_view path) -> std::unique_ptr<Sink> {
            return std::make_unique<sinks::ChromeTraceSink>(std::string(path));
          }});
      add(core::SinkRegistry::Entry{
          "perfetto", "PATH",
          "Perfetto protobuf trace (ui.perfetto.dev, trace_processor), streamed; PATH ending in "
          ".gz writes gzip",
          [](std::string_view path) -> std::unique_ptr<Sink> {
            return std::make_unique<sinks::PerfettoSink>(std::string(path));
          }});
      add(core::SinkRegistry::Entry{
          "tensorboard", "LOGDIR",
          "TensorBoard: per-step scalars (step time, GPU busy %, kernels, drops, P50/P99 per "
          "range name) and duration histograms in LOGDIR/events.out.tfevents.*, and the "
          "timeline as an XSpace in LOGDIR/plugins/profile/<run>/<host>.xplane.pb for XProf",
          [](std::string_view logdir) -> std::unique_ptr<Sink> {
            return std::make_unique<sinks::TensorBoardSink>(std::string(logdir));
          }});
      // Outside a session (a tool's output), the metrics outputs export the default selection.
      for (const MetricsOutput& m : kMetricsOutputs) {
        const auto make = [&m](std::string_view value) {
          return m.make(value, metrics_hooks(metrics::RangeSelection{}));
        };
        add(core::SinkRegistry::Entry{m.key, m.value_hint, m.help, make, /*writes_trace=*/false});
      }
    });
  } catch (...) {
    // Out of memory at the first config: the built-in sinks stay unregistered, and said so.
  }
}

}  // namespace gpuprobe::session

namespace gpuprobe {

Status register_sink(std::string_view key, std::string_view value_hint, std::string_view help,
                     SinkFactory factory) {
  session::register_builtin_sinks();  // first, so that the built-in keys cannot be taken
  try {
    return core::SinkRegistry::get().add(
        core::SinkRegistry::Entry{std::string(key), std::string(value_hint), std::string(help),
                                  std::move(factory)},
        session::is_option_key);
  } catch (...) {
    return Status::Error("register_sink: out of memory");
  }
}

}  // namespace gpuprobe
