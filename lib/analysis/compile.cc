#include "analysis/compile.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "analysis/name_stats.h"
#include "formats/compile_marks.h"
#include "formats/framework_events.h"

namespace gpuprobe::analysis {
namespace {

namespace fe = formats::framework_events;

bool starts_with(const char* s, std::string_view prefix) {
  return std::strncmp(s, prefix.data(), prefix.size()) == 0;
}

// torch.profiler's (Kineto's) name for the span of one frame's compile, which Dynamo's
// dynamo_timed records with a record_function; its id comes in an annotation beside it.
constexpr std::string_view kProfilerFrameCompile = "entire_frame_compile";
constexpr std::string_view kProfilerFrameCompileData = "entire_frame_compile_data:";

}  // namespace

bool is_frame_compile(const CallSite& site) {
  // A compile's phases are ranges inside it, not compiles; other compilers' are counted apart;
  // a compiled call's guards are no compile.
  if (site.category == Category::kCompile)
    return !starts_with(site.name, fe::kCompilePhase) &&
           !starts_with(site.name, fe::kDynamoGuards) && !is_other_compile(site);
  return site.name == kProfilerFrameCompile;
}

bool is_other_compile(const CallSite& site) {
  return site.category == Category::kCompile &&
         (starts_with(site.name, fe::kJax) || starts_with(site.name, fe::kTritonCompile) ||
          starts_with(site.name, fe::kTritonCacheLoad));
}

void Compile::RunsAfter::add(std::int64_t begin) {
  begins.push_back(begin);
  if (begins.size() <= kMaxAfter) return;
  folded_last = std::max(folded_last, begins.front());
  ++folded;
  begins.pop_front();
}

void Compile::RunsAfter::compile_ended(std::int64_t end) {
  if (folded_last < end) {
    folded = 0;
    folded_last = INT64_MIN;
  }
  begins.erase(std::remove_if(begins.begin(), begins.end(),
                              [end](std::int64_t begin) { return begin < end; }),
               begins.end());
}

void Compile::Runs::add(std::uint32_t thread, std::int64_t begin, std::int64_t end) {
  const auto [it, first] = open.try_emplace(thread, Interval{begin, end});
  Interval& run = it->second;
  if (first) return;
  if (begin < run.end && end > run.begin) {
    run = {std::min(run.begin, begin), std::max(run.end, end)};
    return;
  }
  ns += run.end - run.begin;
  ++count;
  run = {begin, end};
}

void Compile::Runs::flush() {
  for (const auto& [thread, run] : open) {
    ns += run.end - run.begin;
    ++count;
  }
  open.clear();
}

// gpuprobe.torch's marks (python/gpuprobe/torch/compile.py): "recompile <id>: <reason>",
// "recompile limit hit: <warning>", "eager fallback <id>: <frame>: <error>", "graph break:
// <cause>" (one per occurrence). The limit warning shares the recompile prefix and is not a
// recompile.
void Compile::add_mark(const char* name) {
  CompileResult& c = result_;
  if (starts_with(name, fe::kRecompileLimitHit)) {
    c.limit_hits.emplace_back(name);
  } else if (formats::RecompileMark recompile; formats::parse_recompile_mark(name, &recompile)) {
    c.recompiles.emplace_back(name + sizeof fe::kRecompile - 1);
  } else if (starts_with(name, fe::kRestart)) {
    c.restarts.emplace_back(name + sizeof fe::kRestart - 1);
  } else if (starts_with(name, fe::kEagerFallback)) {
    c.fallbacks.emplace_back(name + sizeof fe::kEagerFallback - 1);
  } else if (starts_with(name, fe::kGraphBreak)) {
    c.graph_breaks[name + sizeof fe::kGraphBreak - 1]++;
  } else if (starts_with(name, fe::kGeneratedCode)) {
    add_generated_code(name + sizeof fe::kGeneratedCode - 1);
  } else if (formats::CacheMark mark; formats::parse_cache_mark(name, &mark)) {
    CompileResult::CacheLayer& layer = c.cache_layers[std::string(mark.layer)];
    if (mark.hit) {
      ++layer.hits;
      return;
    }
    ++(mark.bypass ? layer.bypasses : layer.misses);
    layer.explained.push_back({std::string(mark.compile_id), std::string(mark.what)});
  }
}

// "<id>: <path>: <kernel>, <kernel>, ..." (the list may end ", and N more").
void Compile::add_generated_code(std::string_view mark) {
  const std::size_t id_end = mark.find(": ");
  if (id_end == std::string_view::npos) return;
  const std::size_t path_end = mark.find(": ", id_end + 2);
  CompileResult::GeneratedModule m;
  m.compile_id = std::string(mark.substr(0, id_end));
  m.path = std::string(mark.substr(id_end + 2, path_end == std::string_view::npos
                                                   ? std::string_view::npos
                                                   : path_end - id_end - 2));
  if (path_end != std::string_view::npos) {
    std::string_view list = mark.substr(path_end + 2);
    while (!list.empty()) {
      const std::size_t comma = list.find(", ");
      const std::string_view kernel = list.substr(0, comma);
      if (!kernel.empty() && kernel.rfind("and ", 0) != 0) m.kernels.emplace_back(kernel);
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 2);
    }
  }
  for (const std::string& k : m.kernels) generated_kernels_[k] = result_.generated.size();
  result_.generated.push_back(std::move(m));
}

// torch.profiler's "entire_frame_compile_data: fn_name=..., compile_id=F/N": frame F's compile
// N, a recompile when N > 0 (such a trace does not say why).
void Compile::add_profiler_compile_id(const char* name) {
  if (!starts_with(name, kProfilerFrameCompileData)) return;
  const char* id = std::strstr(name, "compile_id=");
  if (id == nullptr) return;
  id += 11;
  const char* slash = std::strchr(id, '/');
  if (slash == nullptr || std::strtol(slash + 1, nullptr, 10) <= 0) return;
  result_.recompiles.push_back(std::string(id, std::strcspn(id, ", ")) +
                               ": (torch.profiler's trace does not record the reason)");
}

// "<mode>: <what>" = value; a mode's row is where its first value is.
void Compile::add_mode_value(std::string_view counter, double value) {
  const std::size_t colon = counter.rfind(": ");
  if (colon == std::string_view::npos || colon == 0) return;
  const std::string_view mode = counter.substr(0, colon);
  std::vector<CompileResult::ModeRow>& rows = result_.modes;
  auto row = std::find_if(rows.begin(), rows.end(),
                          [&](const CompileResult::ModeRow& m) { return m.mode == mode; });
  if (row == rows.end()) row = rows.insert(rows.end(), {std::string(mode), {}});
  row->values[std::string(counter.substr(colon + 2))] = value;
}

void Compile::add(const ReportEvent& r) {
  const Event& e = *r.event;
  CompileResult& c = result_;
  // By name alone: a Perfetto trace's counter tracks carry no category.
  if (e.type == EventType::kCounter) {
    const std::string_view name = e.site->name;
    if (starts_with(e.site->name, fe::kCompileMode)) {
      add_mode_value(name.substr(sizeof fe::kCompileMode - 1), e.value);
      return;
    }
    if (starts_with(e.site->name, fe::kCompilePhaseSeconds)) {
      c.phase_seconds[std::string(name.substr(sizeof fe::kCompilePhaseSeconds - 1))] = e.value;
      return;
    }
    double* slot = name == fe::kCacheHits          ? &c.cache_hits
                   : name == fe::kCacheMisses      ? &c.cache_misses
                   : name == fe::kGraphOps         ? &c.graph_ops
                   : name == fe::kKernelsGenerated ? &c.kernels_generated
                   : name == fe::kSpeedup          ? &c.speedup
                                                   : nullptr;
    if (slot != nullptr) *slot = e.value;  // totals: the last value is the answer
    return;
  }
  if (e.type == EventType::kInstant && e.site->category == Category::kCompile) {
    add_mark(e.site->name);
    return;
  }
  if (e.type == EventType::kGpu && e.gpu->kind == GpuActivityKind::kKernel &&
      e.gpu->name != nullptr) {
    auto& [ns, runs] = kernel_time_[e.gpu->name];
    ns += r.end_ns - r.begin_ns;
    ++runs;
    return;
  }
  if (e.type != EventType::kRange || r.row == nullptr) return;  // CPU ranges only
  if (std::strcmp(e.site->name, fe::kGraphBreakEager) == 0) {
    break_eager_ns_.push_back(r.end_ns - r.begin_ns);
  } else if (is_frame_compile(*e.site)) {
    ++c.compiles;
    c.compile_ns += r.end_ns - r.begin_ns;
    c.last_compile_end_ns = std::max(c.last_compile_end_ns, r.end_ns);
    for (RunsAfter& after : runs_after_) after.compile_ended(r.end_ns);
  }
  add_profiler_compile_id(e.site->name);
  if (e.site->category == Category::kStep) ++c.steps;
  if (const std::uint8_t kind = r.row->compiled_run; kind != 0) {
    runs_[kind].add(e.thread, r.begin_ns, r.end_ns);
    if (r.begin_ns >= c.last_compile_end_ns) runs_after_[kind].add(r.begin_ns);
  }
  if (r.row->compiled_run != 0)
    ++run_ranges_[r.row->compiled_run][std::strcmp(e.site->name, fe::kCompiledGraphBackward) == 0];
}

// Each generated module's graph runs, where the trace tells them apart (compile.h): with every
// module from one compile, the graph runs gpuprobe.torch recorded, forward to the first module
// and backward to the second; a Dynamo frame's runs (torch.profiler's trace) to the first alone.
void Compile::attribute_graph_runs() {
  std::vector<CompileResult::GeneratedModule>& modules = result_.generated;
  for (const auto& m : modules) {
    if (m.compile_id != modules.front().compile_id) return;
  }
  const bool graphs = run_ranges_[1][0] + run_ranges_[1][1] > 0;
  for (std::size_t i = 0; i < modules.size() && i < (graphs ? 2u : 1u); ++i)
    modules[i].graph_runs = static_cast<std::int64_t>(run_ranges_[graphs ? 1 : 2][i]);
}

void Compile::finish(const TraceContext& trace) {
  // Compiled code: graph runs when the trace has them (frames also hold graph breaks' eager code).
  for (Runs& runs : runs_) runs.flush();
  for (const auto& [kernel, module] : generated_kernels_) {
    const auto it = kernel_time_.find(kernel);
    if (it == kernel_time_.end()) continue;
    result_.generated[module].kernel_gpu_ns += it->second.first;
    result_.generated[module].kernel_runs += it->second.second;
  }
  const int kind = runs_[1].count > 0 ? 1 : 2;
  const Runs& runs = runs_[kind];
  attribute_graph_runs();
  CompileResult& c = result_;
  c.runs = runs.count;
  c.run_ns = runs.ns;
  if (CompileResult::BreakCost& b = c.break_cost; !break_eager_ns_.empty()) {
    b.returns = break_eager_ns_.size();
    for (const std::int64_t ns : break_eager_ns_) b.overhead_ns += ns;
    const auto middle = break_eager_ns_.begin() + break_eager_ns_.size() / 2;
    std::nth_element(break_eager_ns_.begin(), middle, break_eager_ns_.end());
    b.median_ns = *middle;
    b.fallback_ms = ms(b.overhead_ns) / static_cast<double>(b.returns);
    if (b.overhead_ns > 0)
      b.share = static_cast<double>(b.overhead_ns) / static_cast<double>(b.overhead_ns + c.run_ns);
  }
  // Their share of the time outside compiles (--steps narrows it to steady-state steps).
  c.base_ns = std::max<std::int64_t>(trace.end_ns - trace.start_ns - c.compile_ns, 0);
  if (c.compiles > 0 && c.runs > 0) {
    c.after_last_compile =
        std::min(static_cast<double>(runs_after_[kind].count()) / static_cast<double>(c.runs), 1.0);
  } else if (c.compiles > 0 && c.base_ns > 0) {
    const std::int64_t after = std::max<std::int64_t>(trace.end_ns - c.last_compile_end_ns, 0);
    c.after_last_compile =
        std::min(static_cast<double>(after) / static_cast<double>(c.base_ns), 1.0);
  }
  if (c.runs > 0) {
    c.amortised_ms = static_cast<double>(c.compile_ns) * 1e-6 / static_cast<double>(c.runs);
    if (c.base_ns > 0)
      c.share = std::min(static_cast<double>(c.run_ns) / static_cast<double>(c.base_ns), 1.0);
    if (c.share >= 0 && c.share < 1) c.amdahl_bound = 1 / (1 - c.share);
    if (c.share >= 0 && c.speedup > 0) c.program_speedup = 1 - c.share + c.share * c.speedup;
    if (c.speedup > 1 && c.run_ns > 0)
      c.break_even_runs =
          static_cast<double>(c.compile_ns) /
          (static_cast<double>(c.run_ns) / static_cast<double>(c.runs) * (c.speedup - 1));
  }
}

void Compile::write_json(const TraceContext& trace, nlohmann::json* report) const {
  using nlohmann::json;
  const CompileResult& c = result_;
  const auto known = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  json j = {{"compiles", c.compiles},
            {"compile_ms", ms(c.compile_ns)},
            {"steps", c.steps},
            {"recompiles", c.recompiles},
            {"eager_fallbacks", c.fallbacks},
            {"recompile_limit_hits", c.limit_hits},
            {"restarts", c.restarts},
            {"graph_breaks", c.graph_breaks}};
  json layers = json::object(), explained = json::array();
  for (const auto& [name, layer] : c.cache_layers) {
    layers[name] = {{"hits", layer.hits}, {"misses", layer.misses}, {"bypasses", layer.bypasses}};
    for (const auto& miss : layer.explained)
      explained.push_back(miss.compile_id + " " + name + ": " + miss.what);
  }
  const CompileResult::BreakCost& b = c.break_cost;
  j["graph_break_cost"] = {
      {"returns_to_eager", b.returns},
      {"t_overhead_ms", ms(b.overhead_ns)},
      {"t_fallback_ms", b.returns > 0 ? json(b.fallback_ms) : json(nullptr)},
      {"median_ms", b.returns > 0 ? json(ms(b.median_ns)) : json(nullptr)},
      // of the compiled code's time with the eager code between its graphs
      {"share_of_compiled_code", b.overhead_ns > 0 ? json(b.share) : json(nullptr)}};
  j["cache_layers"] = layers;
  j["phase_seconds"] = c.phase_seconds;
  json generated = json::array();
  for (const auto& m : c.generated) {
    generated.push_back({{"compile_id", m.compile_id},
                         {"path", m.path},
                         {"kernels", m.kernels},
                         {"kernel_gpu_ms", ms(m.kernel_gpu_ns)},
                         {"kernel_runs", m.kernel_runs},
                         {"graph_runs", m.graph_runs >= 0 ? json(m.graph_runs) : json(nullptr)}});
  }
  j["generated_code"] = generated;
  j["cache_misses_explained"] = explained;
  j["cache_hits"] = known(c.cache_hits);
  j["cache_misses"] = known(c.cache_misses);
  j["graph_ops"] = known(c.graph_ops);
  j["kernels_generated"] = known(c.kernels_generated);
  j["ops_per_kernel"] = c.graph_ops > 0 && c.kernels_generated > 0
                            ? json(c.graph_ops / c.kernels_generated)
                            : json(nullptr);
  j["speedup"] = known(c.speedup);
  j["runs"] = c.runs;
  j["execute_ms"] = ms(c.run_ns);
  j["outside_compiles_ms"] = ms(c.base_ns);  // the compiled share's denominator
  j["last_compile_end_ms"] =
      c.compiles > 0 ? json(ms(c.last_compile_end_ns - trace.start_ns)) : json(nullptr);
  j["after_last_compile"] = known(c.after_last_compile);
  j["amortised_ms"] = known(c.amortised_ms);
  j["compiled_share"] = known(c.share);
  j["amdahl_bound"] = known(c.amdahl_bound);
  j["program_speedup"] = known(c.program_speedup);
  j["break_even_runs"] = known(c.break_even_runs);
  json modes = json::array();
  for (const CompileResult::ModeRow& m : c.modes) {
    json row = {{"mode", m.mode}};
    for (const fe::ModeColumn& column : fe::kModeColumns) {
      const auto it = m.values.find(column.mark);
      const bool unknown = it == m.values.end() || (column.negative_unknown && it->second < 0);
      row[column.key] = unknown ? json(nullptr) : json(it->second * column.scale);
    }
    if (!row["passed"].is_null()) row["passed"] = row["passed"].get<double>() > 0;
    modes.push_back(std::move(row));
  }
  j["modes"] = modes;
  json columns = json::array();
  for (const fe::ModeColumn& column : fe::kModeColumns)
    columns.push_back({{"key", column.key}, {"heading", column.heading}});
  j["mode_columns"] = columns;
  (*report)["compile"] = j;
}

}  // namespace gpuprobe::analysis
