#include "session/builtin_sinks.h"

#include <memory>
#include <mutex>
#include <string>

#include "core/sink_registry.h"
#include "core/thread_registry.h"
#include "metrics/metrics_endpoint.h"
#include "metrics/metrics_file_sink.h"
#include "session/dump_control.h"
#include "sinks/chrome_trace_sink.h"
#include "sinks/perfetto_sink.h"
#include "sinks/tensorboard_sink.h"

namespace gpuprobe::session {
namespace {

std::mutex g_selection_mu;
metrics::RangeSelection g_selection;

// What the metrics outputs are given: the flight recorder's hooks, the rings' memory, and the
// names the config selects.
metrics::SessionHooks metrics_hooks() {
  metrics::SessionHooks hooks = flight_hooks();
  hooks.ring_bytes = [] { return core::ThreadRegistry::get().allocated_bytes(); };
  std::lock_guard<std::mutex> lock(g_selection_mu);
  hooks.ranges = g_selection;
  return hooks;
}

}  // namespace

void set_metrics_selection(metrics::RangeSelection selection) {
  std::lock_guard<std::mutex> lock(g_selection_mu);
  g_selection = std::move(selection);
}

void register_builtin_sinks() noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      core::SinkRegistry& registry = core::SinkRegistry::get();
      // A failure here would be a bug of this list (a key taken twice): the sink is then absent
      // and a config naming it says "unknown config key".
      static_cast<void>(registry.add(core::SinkRegistry::Entry{
          "chrome", "PATH",
          "Chrome trace JSON as torch.profiler writes it (Perfetto UI, HTA, chrome://tracing); "
          "PATH ending in .gz writes gzip; PATH ending in / writes "
          "PATH<host>_<pid>.<ns>.pt.trace.json as torch.profiler's tensorboard_trace_handler "
          "does (PATH/+gz: the same, gzipped)",
          [](std::string_view path) -> std::unique_ptr<Sink> {
            return std::make_unique<sinks::ChromeTraceSink>(std::string(path));
          }}));
      static_cast<void>(registry.add(core::SinkRegistry::Entry{
          "perfetto", "PATH",
          "Perfetto protobuf trace (ui.perfetto.dev, trace_processor), streamed; PATH ending in "
          ".gz writes gzip",
          [](std::string_view path) -> std::unique_ptr<Sink> {
            return std::make_unique<sinks::PerfettoSink>(std::string(path));
          }}));
      static_cast<void>(registry.add(core::SinkRegistry::Entry{
          "tensorboard", "LOGDIR",
          "TensorBoard: per-step scalars (step time, GPU busy %, kernels, drops, P50/P99 per "
          "range name) and duration histograms in LOGDIR/events.out.tfevents.*, and the "
          "timeline as an XSpace in LOGDIR/plugins/profile/<run>/<host>.xplane.pb for XProf",
          [](std::string_view logdir) -> std::unique_ptr<Sink> {
            return std::make_unique<sinks::TensorBoardSink>(std::string(logdir));
          }}));
      static_cast<void>(registry.add(core::SinkRegistry::Entry{
          "metrics", "[HOST:]PORT",
          "serve the metrics of metrics_file over HTTP, GET /metrics (OpenMetrics with exemplars "
          "when asked, else Prometheus text 0.0.4), and POST /dump[?reason=TEXT] to the flight "
          "recorder, on 127.0.0.1 unless HOST is given; PORT 0 picks a free one",
          [](std::string_view value) -> std::unique_ptr<Sink> {
            return std::make_unique<metrics::MetricsEndpoint>(std::string(value), metrics_hooks());
          }}));
      static_cast<void>(registry.add(core::SinkRegistry::Entry{
          "metrics_file", "PATH",
          "Prometheus metrics in the text format (range duration histograms by name, steps, "
          "GPU kernels and busy time, events and drops), rewritten at most once a second and "
          "at the end: node_exporter's textfile collector reads PATH ending in .prom",
          [](std::string_view path) -> std::unique_ptr<Sink> {
            return std::make_unique<metrics::MetricsFileSink>(std::string(path), metrics_hooks());
          }}));
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
    return core::SinkRegistry::get().add(core::SinkRegistry::Entry{
        std::string(key), std::string(value_hint), std::string(help), std::move(factory)});
  } catch (...) {
    return Status::Error("register_sink: out of memory");
  }
}

}  // namespace gpuprobe
