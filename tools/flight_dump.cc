#include "tools/flight_dump.h"

#include <filesystem>
#include <fstream>

#include "base/printable_text.h"
#include "base/utc_time.h"

namespace gpuprobe::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kDescription = "dump.json";

std::string utc(std::int64_t ns) { return base::utc_time(ns, base::UtcStyle::kExtended); }

template <typename T>
T get(const json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

// The range a trigger watches: "p99:request>50ms/10s" and "slow:request>200ms" name "request".
std::string watched_range(const std::string& trigger) {
  const std::size_t colon = trigger.find(':'), gt = trigger.rfind('>');
  if (colon == std::string::npos || gt == std::string::npos || gt <= colon + 1) return "";
  const std::string kind = trigger.substr(0, colon);
  if (kind != "slow" && (kind.size() < 2 || kind[0] != 'p')) return "";
  return trigger.substr(colon + 1, gt - colon - 1);
}

}  // namespace

bool is_flight_dump(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(fs::path(dir) / kDescription, ec);
}

Status read_flight_dump(const std::string& dir, FlightDump* out) {
  const fs::path description = fs::path(dir) / kDescription;
  std::ifstream in(description);
  json d = json::parse(in, nullptr, false);
  if (d.is_discarded() || !d.is_object() || get<std::string>(d, "format", "") != "gpuprobe-dump") {
    return Status::Error(description.string() + " is not a gpuprobe dump description");
  }
  FlightDump& f = *out;
  // The flight window where the dump wrote one (the recorder's own bytes, the fastest to read),
  // else the Perfetto trace (it keeps every field), else a Chrome trace.
  std::string perfetto, chrome;
  for (const json& file : d.value("files", json::array())) {
    if (!file.is_string()) continue;
    const std::string name = file.get<std::string>();
    const std::string path = (fs::path(dir) / name).string();
    if (name.find(".gpwindow") != std::string::npos && f.trace.empty()) {
      f.trace = path;
    } else if (name.find(".pftrace") != std::string::npos && perfetto.empty()) {
      perfetto = path;
    } else if (name.find(".json") != std::string::npos && chrome.empty()) {
      chrome = path;
    }
  }
  if (f.trace.empty()) f.trace = perfetto.empty() ? chrome : perfetto;
  if (f.trace.empty()) {
    return Status::Error(description.string() +
                         " lists no trace this command reads (dump_format= window, perfetto or "
                         "chrome)");
  }
  f.name = get<std::string>(d, "name", fs::path(dir).filename().string());
  f.source = get<std::string>(d, "source", "");
  f.reason = get<std::string>(d, "reason", "");
  f.trigger = get<std::string>(d, "trigger", "");
  f.trigger_ns = get<std::int64_t>(d, "trigger_time_ns", 0);
  const json window = d.value("window", json::object());
  f.window_from_ns = get<std::int64_t>(window, "from_ns", 0);
  f.window_to_ns = get<std::int64_t>(window, "to_ns", 0);
  f.before_s = get<double>(window, "before_s", 0);
  f.after_s = get<double>(window, "after_s", 0);
  f.host = get<std::string>(d, "host", "");
  f.process_name = get<std::string>(d, "process_name", "");
  f.pid = get<long long>(d, "pid", -1);
  f.rank = get<long long>(d, "rank", -1);
  f.events = get<long long>(d, "events", 0);
  f.gpu_events = get<long long>(d, "gpu_events", 0);
  const json drops = d.value("drops", json::object());
  f.dropped = get<long long>(drops, "events_dropped", 0) +
              get<long long>(drops, "events_dropped_no_ring", 0) +
              get<long long>(drops, "gpu_dropped", 0);
  f.overwritten = get<long long>(drops, "flight_overwritten_by_age", 0) +
                  get<long long>(drops, "flight_overwritten_by_memory", 0);
  const json gpu = d.value("gpu_recording", json::object());
  f.gpu_sampled = get<bool>(gpu, "sampled", false);
  f.gpu_recorded_s = get<double>(gpu, "recorded_s", 0);
  if (f.source == "trigger") {
    const json values = d.value("values", json::object());
    f.latency_name = watched_range(f.trigger);
    f.threshold_ms = get<double>(values, "threshold_ms", 0);
    // A percentile trigger watched its rolling window; a slow: trigger, the one range that
    // ended at the trigger.
    const double watched_s = get<double>(values, "window_s", 0);
    f.watched_from_ns = watched_s > 0 ? f.trigger_ns - static_cast<std::int64_t>(watched_s * 1e9)
                                      : f.window_from_ns;
  }
  return {};
}

void apply_trigger(const FlightDump& dump, analysis::ReportOptions* options) {
  if (dump.latency_name.empty()) return;
  if (!options->latency_name.empty() && options->latency_name != dump.latency_name) return;
  options->latency_name = dump.latency_name;
  if (options->outlier_threshold_ms <= 0) options->outlier_threshold_ms = dump.threshold_ms;
  options->outliers_from_ns = dump.watched_from_ns;
  options->outliers_to_ns = dump.trigger_ns + 1;
}

void print_dump_header(const FlightDump& d, std::FILE* o) {
  // A dump directory may come from anywhere: what its dump.json says is printed as text only.
  const auto text = [](const std::string& s) { return base::printable_text(s, 1000); };
  std::fprintf(o, "dump %s (%s): %s\n", text(d.name).c_str(), text(d.source).c_str(),
               d.reason.empty() ? "no reason given" : text(d.reason).c_str());
  std::fprintf(o, "  %s%s at %s; %s, %s pid %lld", d.trigger.empty() ? "" : "trigger ",
               text(d.trigger).c_str(), utc(d.trigger_ns).c_str(), text(d.host).c_str(),
               text(d.process_name).c_str(), d.pid);
  if (d.rank >= 0) std::fprintf(o, ", rank %lld", d.rank);
  std::fputc('\n', o);
  std::fprintf(o,
               "  window %.1f s (%.0f s before the trigger, %.1f s after): %lld events, %lld "
               "lost while recording, %lld older ones let go by the recorder\n",
               static_cast<double>(d.window_to_ns - d.window_from_ns) * 1e-9, d.before_s, d.after_s,
               d.events, d.dropped, d.overwritten);
  if (d.gpu_events == 0) {
    std::fprintf(o, "  GPU activity: none recorded\n");
  } else if (d.gpu_sampled) {
    std::fprintf(o, "  GPU activity: %lld records, in bursts covering %.1f s of the window\n",
                 d.gpu_events, d.gpu_recorded_s);
  } else {
    std::fprintf(o, "  GPU activity: %lld records, the whole window\n", d.gpu_events);
  }
  if (!d.latency_name.empty()) {
    std::fprintf(o,
                 "  outliers below: \"%s\" above %g ms that began in the %.1f s the trigger "
                 "watched\n",
                 text(d.latency_name).c_str(), d.threshold_ms,
                 static_cast<double>(d.trigger_ns - d.watched_from_ns) * 1e-9);
  }
  std::fputc('\n', o);
}

json dump_json(const FlightDump& d) {
  json j = {{"name", d.name},
            {"source", d.source},
            {"reason", d.reason},
            {"trigger", d.trigger},
            {"trigger_time", utc(d.trigger_ns)},
            {"window_s", static_cast<double>(d.window_to_ns - d.window_from_ns) * 1e-9},
            {"events", d.events},
            {"dropped", d.dropped},
            {"overwritten", d.overwritten},
            {"gpu_events", d.gpu_events},
            {"gpu_sampled", d.gpu_sampled},
            {"trace", d.trace}};
  if (!d.latency_name.empty()) {
    j["watched"] = {{"range", d.latency_name},
                    {"threshold_ms", d.threshold_ms},
                    {"seconds", static_cast<double>(d.trigger_ns - d.watched_from_ns) * 1e-9}};
  }
  return j;
}

}  // namespace gpuprobe::tools
