#include "tools/flight_dump.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "base/printable_text.h"
#include "base/utc_time.h"
#include "formats/dump_description.h"
#include "readers/regular_file.h"

namespace gpuprobe::tools {
namespace {

namespace fs = std::filesystem;
namespace dd = formats::dump_description;
using nlohmann::json;

constexpr const char* kDescription = dd::kFileName;
// A dump.json is a few KiB (a line per thread of the window: a few MiB with tens of thousands);
// these bound what a hostile one costs (nlohmann's parser keeps its own stack, but copying,
// comparing or printing a value recurses once per level).
constexpr std::size_t kMaxDescriptionBytes = 64 << 20;
constexpr int kMaxDescriptionDepth = 32;

std::string utc(std::int64_t ns) { return base::utc_time(ns, base::UtcStyle::kExtended); }

// Arithmetic on the times and counts of a file, which may be any integer: saturating, never
// undefined.
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}
std::int64_t sub_sat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}
// `to - from` in seconds, computed in doubles so that no difference overflows.
// Nanoseconds as an int64_t, saturating (a double past 2^63 does not convert).
std::int64_t saturate_ns(double ns) {
  if (!(ns < 9.2e18)) return std::numeric_limits<std::int64_t>::max();
  if (!(ns > -9.2e18)) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(ns);
}
double seconds_between(std::int64_t from, std::int64_t to) {
  return (static_cast<double>(to) - static_cast<double>(from)) * 1e-9;
}

// The member `key` of object `j`, or null; never a copy.
const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

// An integer member: a JSON integer within int64_t, else `fallback` (a float such as 1e300 or
// an integer past 2^63 is not converted, which would be undefined or wrong).
std::int64_t int_of(const json& j, const char* key, std::int64_t fallback) {
  const json* v = member(j, key);
  if (v == nullptr) return fallback;
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? fallback
               : static_cast<std::int64_t>(u);
  }
  return v->is_number_integer() ? v->get<std::int64_t>() : fallback;
}
// A count: an integer of at least 0, else 0.
std::int64_t count_of(const json& j, const char* key) {
  const std::int64_t n = int_of(j, key, 0);
  return n < 0 ? 0 : n;
}
// A finite number, else `fallback`.
double double_of(const json& j, const char* key, double fallback) {
  const json* v = member(j, key);
  if (v == nullptr || !v->is_number()) return fallback;
  const double d = v->get<double>();
  return std::isfinite(d) ? d : fallback;
}
std::string string_of(const json& j, const char* key, std::string fallback) {
  const json* v = member(j, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}
bool bool_of(const json& j, const char* key) {
  const json* v = member(j, key);
  return v != nullptr && v->is_boolean() && v->get<bool>();
}
const json& object_of(const json& j, const char* key) {
  static const json kEmpty = json::object();
  const json* v = member(j, key);
  return v != nullptr && v->is_object() ? *v : kEmpty;
}

// A file a dump lists: a name inside the dump's directory, nothing that leads out of it.
// A relative path inside the dump ("trace.pftrace", "chrome/host_1.pt.trace.json"): no leading
// '/', no empty, "." or ".." component, no NUL.
bool plain_file_name(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos) return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
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
  // Whatever dump.json is (a FIFO, a link, a directory), read_flight_dump says what is wrong
  // with it, rather than the directory being taken for a directory of traces.
  return fs::is_directory(dir, ec) &&
         fs::exists(fs::symlink_status(fs::path(dir) / kDescription, ec));
}

Status read_flight_dump(const std::string& dir, FlightDump* out) {
  const fs::path description = fs::path(dir) / kDescription;
  std::string text;
  if (Status s = readers::read_regular_file(description.string(), kMaxDescriptionBytes, &text);
      !s.ok()) {
    return s;
  }
  // nlohmann's parser keeps its own stack; the callback refuses (and does not build) containers
  // deeper than a dump's, so that no later copy or destruction recurses deeply.
  bool too_deep = false;
  const json::parser_callback_t bounded = [&too_deep](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxDescriptionDepth) {
      too_deep = true;
      return false;
    }
    return true;
  };
  const json d = json::parse(text, bounded, false);
  if (too_deep) {
    return Status::Error(description.string() + ": nested deeper than " +
                         std::to_string(kMaxDescriptionDepth) +
                         " levels, not a gpuprobe dump description");
  }
  if (d.is_discarded() || !d.is_object() || string_of(d, dd::kFormat, "") != dd::kFormatName) {
    return Status::Error(description.string() + " is not a gpuprobe dump description");
  }
  FlightDump& f = *out;
  // The flight window where the dump wrote one (the recorder's own bytes, the fastest to read),
  // else the Perfetto trace (it keeps every field), else a Chrome trace.
  std::string perfetto, chrome;
  if (const json* files = member(d, dd::kFiles); files != nullptr && files->is_array()) {
    for (const json& file : *files) {
      if (!file.is_string()) continue;
      const std::string& name = file.get_ref<const std::string&>();
      if (!plain_file_name(name)) {
        return Status::Error(
            description.string() +
            ": lists a file outside the dump's directory (an absolute path or '..')");
      }
      const std::string path = (fs::path(dir) / name).string();
      if (name.find(".gpwindow") != std::string::npos && f.trace.empty()) {
        f.trace = path;
      } else if (name.find(".pftrace") != std::string::npos && perfetto.empty()) {
        perfetto = path;
      } else if (name.find(".json") != std::string::npos && chrome.empty()) {
        chrome = path;
      }
    }
  }
  if (f.trace.empty()) f.trace = perfetto.empty() ? chrome : perfetto;
  if (f.trace.empty()) {
    return Status::Error(description.string() +
                         " lists no trace this command reads (dump_format= window, perfetto or "
                         "chrome)");
  }
  f.name = string_of(d, dd::kName, fs::path(dir).filename().string());
  f.source = string_of(d, dd::kSource, "");
  f.reason = string_of(d, dd::kReason, "");
  f.trigger = string_of(d, dd::kTrigger, "");
  f.trigger_ns = int_of(d, dd::kTriggerTimeNs, 0);
  const json& window = object_of(d, dd::kWindow);
  f.window_from_ns = int_of(window, dd::kFromNs, 0);
  f.window_to_ns = int_of(window, dd::kToNs, 0);
  f.before_s = double_of(window, dd::kBeforeS, 0);
  f.after_s = double_of(window, dd::kAfterS, 0);
  f.host = string_of(d, dd::kHost, "");
  f.process_name = string_of(d, dd::kProcessName, "");
  f.pid = int_of(d, dd::kPid, -1);
  f.rank = int_of(d, dd::kRank, -1);
  f.events = count_of(d, dd::kEvents);
  f.gpu_events = count_of(d, dd::kGpuEvents);
  const json& drops = object_of(d, dd::kDrops);
  f.dropped = add_sat(
      add_sat(count_of(drops, dd::kEventsDropped), count_of(drops, dd::kEventsDroppedNoRing)),
      count_of(drops, dd::kGpuDropped));
  f.overwritten =
      add_sat(count_of(drops, dd::kOverwrittenByAge), count_of(drops, dd::kOverwrittenByMemory));
  const json& gpu = object_of(d, dd::kGpuRecording);
  f.gpu_sampled = bool_of(gpu, dd::kSampled);
  f.gpu_recorded_s = double_of(gpu, dd::kRecordedS, 0);
  if (f.source == "trigger") {
    const json& values = object_of(d, dd::kValues);
    f.latency_name = watched_range(f.trigger);
    f.threshold_ms = double_of(values, dd::kThresholdMs, 0);
    // A percentile trigger watched its rolling window; a slow: trigger, the one range that
    // ended at the trigger.
    const double watched_s = double_of(values, dd::kWindowS, 0);
    f.watched_from_ns =
        watched_s > 0 ? sub_sat(f.trigger_ns, saturate_ns(watched_s * 1e9)) : f.window_from_ns;
  }
  return {};
}

void apply_trigger(const FlightDump& dump, analysis::ReportOptions* options) {
  if (dump.latency_name.empty()) return;
  if (!options->latency_name.empty() && options->latency_name != dump.latency_name) return;
  options->latency_name = dump.latency_name;
  if (options->outlier_threshold_ms <= 0) options->outlier_threshold_ms = dump.threshold_ms;
  options->outliers_from_ns = dump.watched_from_ns;
  options->outliers_to_ns = add_sat(dump.trigger_ns, 1);
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
               seconds_between(d.window_from_ns, d.window_to_ns), d.before_s, d.after_s, d.events,
               d.dropped, d.overwritten);
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
                 seconds_between(d.watched_from_ns, d.trigger_ns));
  }
  std::fputc('\n', o);
}

json dump_json(const FlightDump& d) {
  json j = {{"name", d.name},
            {"source", d.source},
            {"reason", d.reason},
            {"trigger", d.trigger},
            {"trigger_time", utc(d.trigger_ns)},
            {"window_s", seconds_between(d.window_from_ns, d.window_to_ns)},
            {"events", d.events},
            {"dropped", d.dropped},
            {"overwritten", d.overwritten},
            {"gpu_events", d.gpu_events},
            {"gpu_sampled", d.gpu_sampled},
            {"trace", d.trace}};
  if (!d.latency_name.empty()) {
    j["watched"] = {{"range", d.latency_name},
                    {"threshold_ms", d.threshold_ms},
                    {"seconds", seconds_between(d.watched_from_ns, d.trigger_ns)}};
  }
  return j;
}

}  // namespace gpuprobe::tools
