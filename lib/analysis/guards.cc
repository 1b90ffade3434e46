#include "analysis/guards.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "analysis/name_stats.h"
#include "analysis/names.h"
#include "formats/framework_events.h"

namespace gpuprobe::analysis {
namespace {

namespace fe = formats::framework_events;

constexpr char kProfilerLookup[] = "(cache lookup)";  // torch.profiler's, frame unknown

bool starts_with(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

bool is_guards(const char* name) {
  return starts_with(name, fe::kDynamoGuards) || std::strcmp(name, fe::kDynamoCacheLookup) == 0;
}

bool is_forward_graph(const char* name) {
  return std::strcmp(name, fe::kCompiledGraphForward) == 0 ||
         std::strncmp(name, "## Call CompiledFxGraph", 23) == 0;
}

}  // namespace

void Guards::add(const ReportEvent& r) {
  const Event& e = *r.event;
  if (r.row == nullptr || e.type != EventType::kRange) return;
  const char* name = e.site->name;
  if (r.row->compiled_run != 0) {  // names.cc's compiled runs: graphs, and Dynamo's regions
    if (is_forward_graph(name)) {
      ++result_.graph_runs;
      result_.graph_ns += r.end_ns - r.begin_ns;
    }
  } else if ((name[0] == 'd' || name[0] == 'T') && is_guards(name) &&
             std::find(rows_.begin(), rows_.end(), r.row) == rows_.end()) {
    rows_.push_back(r.row);  // its statistics are the name's, kept by Names
  }
}

void Guards::finish(const TraceContext& trace) {
  GuardsResult& g = result_;
  for (const NameStats* row : rows_) {
    if (row->count == 0) continue;
    const char* name = row->name.c_str();
    GuardsResult::Frame f;
    f.frame = starts_with(name, fe::kDynamoGuards) ? name + std::strlen(fe::kDynamoGuards)
                                                   : kProfilerLookup;
    f.calls = row->count;
    f.total_ns = row->total_ns;
    f.p50_ns = row->quantile_ns(0.5);
    f.p99_ns = row->quantile_ns(0.99);
    f.max_ns = row->max_ns;
    g.calls += f.calls;
    g.total_ns += f.total_ns;
    g.frames.push_back(std::move(f));
  }
  std::stable_sort(g.frames.begin(), g.frames.end(),
                   [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  if (g.calls == 0 || trace.names == nullptr || trace.latency_name.empty()) return;
  if (const NameStats* requests = trace.names->range(trace.latency_name)) {
    g.requests = trace.latency_name;
    g.request_count = requests->count;
    g.request_ns = requests->total_ns;
  }
}

void Guards::write_json(const TraceContext&, nlohmann::json* report) const {
  const GuardsResult& g = result_;
  nlohmann::json frames = nlohmann::json::array();
  for (const GuardsResult::Frame& f : g.frames) {
    frames.push_back({{"frame", f.frame},
                      {"calls", f.calls},
                      {"total_ms", ms(f.total_ns)},
                      {"mean_ms", ms(f.total_ns) / static_cast<double>(f.calls)},
                      {"p50_ms", f.p50_ns * 1e-6},
                      {"p99_ms", f.p99_ns * 1e-6},
                      {"max_ms", ms(f.max_ns)}});
  }
  (*report)["guards"] = {
      {"calls", g.calls},
      {"total_ms", ms(g.total_ns)},
      {"frames", std::move(frames)},
      {"requests", g.requests.empty() ? nlohmann::json() : nlohmann::json(g.requests)},
      {"request_count", g.request_count},
      {"share_of_requests", g.request_ns > 0 ? nlohmann::json(static_cast<double>(g.total_ns) /
                                                              static_cast<double>(g.request_ns))
                                             : nlohmann::json()},
      {"graph_runs", g.graph_runs},
      {"graph_ms", ms(g.graph_ns)}};
}

Section Guards::describe(const TextOptions& options) const {
  Section s("guards");
  const GuardsResult& g = result_;
  if (g.calls == 0) return s;
  std::string head = absl::StrFormat("compiled calls' guards: %u call%s, %.4f ms per call, %.3f ms",
                                     g.calls, plural(g.calls),
                                     ms(g.total_ns) / static_cast<double>(g.calls), ms(g.total_ns));
  if (g.request_ns > 0) {
    absl::StrAppendFormat(
        &head, "; %.2f%% of the time in %u \"%s\" (%.4f ms per one)",
        100.0 * static_cast<double>(g.total_ns) / static_cast<double>(g.request_ns),
        g.request_count, g.requests, ms(g.total_ns) / static_cast<double>(g.request_count));
  }
  s.line(0, std::move(head));
  if (g.graph_runs > 0) {
    s.line(1, absl::StrFormat("against %u run%s of the compiled graphs (forward), %.3f ms per run",
                              g.graph_runs, plural(g.graph_runs),
                              ms(g.graph_ns) / static_cast<double>(g.graph_runs)));
  }
  Table& t = s.table(1, {{"frame", 40, true, true},
                         {"calls", 8},
                         {"total ms", 10},
                         {"mean ms", 9},
                         {"p50 ms", 9},
                         {"p99 ms", 9},
                         {"max ms", 9}});
  std::size_t shown = 0;
  for (const GuardsResult::Frame& f : g.frames) {
    if (options.limit > 0 && shown++ >= options.limit) break;
    t.rows.push_back(
        {{f.frame, absl::StrFormat("%u", f.calls), absl::StrFormat("%.3f", ms(f.total_ns)),
          absl::StrFormat("%.4f", ms(f.total_ns) / static_cast<double>(f.calls)),
          absl::StrFormat("%.4f", f.p50_ns * 1e-6), absl::StrFormat("%.4f", f.p99_ns * 1e-6),
          absl::StrFormat("%.4f", ms(f.max_ns))},
         {}});
  }
  return s;
}

}  // namespace gpuprobe::analysis
