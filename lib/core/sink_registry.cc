#include "core/sink_registry.h"

#include "core/config.h"
#include "sinks/chrome_trace_sink.h"
#include "sinks/perfetto_sink.h"
#include "sinks/tensorboard_sink.h"

namespace gpuprobe::core {

SinkRegistry::SinkRegistry() {
  entries_.push_back(Entry{"chrome", "PATH",
                           "Chrome trace JSON as torch.profiler writes it (Perfetto UI, HTA, "
                           "chrome://tracing); PATH ending in .gz writes gzip; PATH ending in / "
                           "writes PATH<host>_<pid>.<ns>.pt.trace.json as torch.profiler's "
                           "tensorboard_trace_handler does (PATH/+gz: the same, gzipped)",
                           [](std::string_view path) -> std::unique_ptr<Sink> {
                             return std::make_unique<sinks::ChromeTraceSink>(std::string(path));
                           }});
  entries_.push_back(Entry{"perfetto", "PATH",
                           "Perfetto protobuf trace (ui.perfetto.dev, trace_processor), streamed; "
                           "PATH ending in .gz writes gzip",
                           [](std::string_view path) -> std::unique_ptr<Sink> {
                             return std::make_unique<sinks::PerfettoSink>(std::string(path));
                           }});
  entries_.push_back(Entry{"tensorboard", "LOGDIR",
                           "TensorBoard: per-step scalars (step time, GPU busy %, kernels, drops, "
                           "P50/P99 per range name) and duration histograms in "
                           "LOGDIR/events.out.tfevents.*, and the timeline as an XSpace in "
                           "LOGDIR/plugins/profile/<run>/<host>.xplane.pb for XProf",
                           [](std::string_view logdir) -> std::unique_ptr<Sink> {
                             return std::make_unique<sinks::TensorBoardSink>(std::string(logdir));
                           }});
}

SinkRegistry& SinkRegistry::get() {
  static SinkRegistry* registry = new SinkRegistry;
  return *registry;
}

Status SinkRegistry::add(Entry entry) {
  if (entry.key.empty() || entry.key.find_first_of(",=+ ") != std::string::npos) {
    return Status::Error("sink key '" + entry.key +
                         "' must be non-empty without ',', '=', '+' or spaces");
  }
  if (!entry.factory) return Status::Error("sink '" + entry.key + "' has no factory");
  if (is_option_key(entry.key)) {
    return Status::Error("sink key '" + entry.key + "' is already a config option");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.key == entry.key)
      return Status::Error("sink key '" + entry.key + "' is already registered");
  }
  entries_.push_back(std::move(entry));
  return {};
}

bool SinkRegistry::contains(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

std::vector<SinkRegistry::Entry> SinkRegistry::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

Status SinkRegistry::create(std::string_view key_value, std::unique_ptr<Sink>* out) const {
  const std::size_t eq = key_value.find('=');
  if (eq == std::string_view::npos)
    return Status::Error("'" + std::string(key_value) + "' is not key=value");
  return create(key_value.substr(0, eq), key_value.substr(eq + 1), out);
}

Status SinkRegistry::create(std::string_view key, std::string_view value,
                            std::unique_ptr<Sink>* out) const {
  SinkFactory factory;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (e.key == key) factory = e.factory;
    }
  }
  const std::string label = std::string(key) + "=" + std::string(value);
  if (!factory) return Status::Error("sink " + label + ": unknown sink key");
  try {
    *out = factory(value);
  } catch (const std::exception& e) {
    return Status::Error("sink " + label + ": factory threw: " + e.what());
  } catch (...) {
    return Status::Error("sink " + label + ": factory threw");
  }
  if (*out == nullptr) return Status::Error("sink " + label + ": factory returned no sink");
  return {};
}

}  // namespace gpuprobe::core

namespace gpuprobe {

Status register_sink(std::string_view key, std::string_view value_hint, std::string_view help,
                     SinkFactory factory) {
  try {
    return core::SinkRegistry::get().add(core::SinkRegistry::Entry{
        std::string(key), std::string(value_hint), std::string(help), std::move(factory)});
  } catch (...) {
    return Status::Error("register_sink: out of memory");
  }
}

}  // namespace gpuprobe
