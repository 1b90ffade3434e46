#include "analysis/names.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"

#include "analysis/compile.h"
#include "analysis/kernel_class.h"
#include "formats/framework_events.h"
#include "formats/steps.h"

namespace gpuprobe::analysis {
namespace {

std::uint8_t compiled_run_kind(const char* name) {
  namespace fe = formats::framework_events;
  if (std::strncmp(name, "## Call CompiledFxGraph", 23) == 0 ||
      std::strncmp(name, fe::kCompiledGraph, sizeof fe::kCompiledGraph - 1) == 0)
    return 1;
  return std::strncmp(name, "Torch-Compiled Region", 21) == 0 ? 2 : 0;
}

std::vector<const NameStats*> sorted(std::vector<const NameStats*> rows, const std::string& by) {
  const auto key = [&](const NameStats* s) -> double {
    if (by == "calls") return static_cast<double>(s->count);
    if (by == "mean") return static_cast<double>(s->total_ns) / static_cast<double>(s->count);
    if (by == "max") return static_cast<double>(s->max_ns);
    if (by == "p99") return s->quantile_ns(0.99);
    return static_cast<double>(s->total_ns);
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const NameStats* a, const NameStats* b) { return key(a) > key(b); });
  return rows;
}

Section name_table(const char* id, const char* title, const std::vector<const NameStats*>& rows,
                   std::int64_t gpu_total, bool ranges, const TextOptions& opt) {
  Section s(id);
  if (rows.empty()) return s;
  s.line(0, absl::StrFormat("%s (%u names, sorted by %s)", title, rows.size(), opt.sort));
  std::vector<Column> columns = {{"name", 40, true, true}, {"calls", 8},   {"total ms", 11},
                                 {"mean ms", 10},          {"min ms", 10}, {"max ms", 10},
                                 {"p50 ms", 10},           {"p99 ms", 10}};
  if (ranges) {
    columns.push_back({"self ms", 7});
    columns.push_back({"GPU ms (launched)", 17});
  } else {
    columns.push_back({"% GPU", 7});
  }
  Table& t = s.table(1, std::move(columns));
  std::size_t n = 0;
  for (const NameStats* r : sorted(rows, opt.sort)) {
    if (n++ == opt.limit) break;
    std::vector<std::string> cells = {
        r->name,
        absl::StrFormat("%u", r->count),
        absl::StrFormat("%.3f", ms(r->total_ns)),
        absl::StrFormat("%.4f", ms(r->total_ns) / static_cast<double>(r->count)),
        absl::StrFormat("%.4f", ms(r->min_ns)),
        absl::StrFormat("%.4f", ms(r->max_ns)),
        absl::StrFormat("%.4f", r->quantile_ns(0.5) * 1e-6),
        absl::StrFormat("%.4f", r->quantile_ns(0.99) * 1e-6)};
    if (ranges) {
      cells.push_back(absl::StrFormat("%.1f", ms(r->self_ns)));
      cells.push_back(absl::StrFormat("%.3f", ms(r->gpu_ns)));
    } else {
      cells.push_back(absl::StrFormat(
          "%.1f%%", gpu_total > 0
                        ? 100.0 * static_cast<double>(r->total_ns) / static_cast<double>(gpu_total)
                        : 0.0));
    }
    t.rows.push_back({std::move(cells), {}});
  }
  return s;
}

}  // namespace

Section describe_kernels(const NamesResult& names, const TextOptions& options) {
  return name_table("kernels", "GPU kernels", names.kernels, names.gpu_kernel_ns, false, options);
}

Section describe_ranges(const NamesResult& names, const TextOptions& options) {
  return name_table("ranges", "ranges", names.ranges, names.gpu_kernel_ns, true, options);
}

NameStats& Names::stats_for(Table& table, Cache& cache, const char* name) {
  const auto cached = cache.find(name);
  if (cached != cache.end()) return *cached->second;
  NameStats& s = table[name];
  if (s.name.empty()) {
    s.name = name;
    if (&table == &range_names_) s.compiled_run = compiled_run_kind(name);
  }
  cache.emplace(name, &s);
  return s;
}

NameStats* Names::row(const Event& e) {
  if (e.type == EventType::kGpu) {
    return e.gpu->kind == GpuActivityKind::kKernel
               ? &stats_for(kernel_names_, kernel_cache_, e.gpu->name)
               : nullptr;
  }
  // Ranges on the GPU timeline (Kineto's gpu_user_annotation) repeat CPU ranges.
  if (e.type != EventType::kRange || e.site->category == Category::kCuda) return nullptr;
  const char* name = e.site->category == Category::kStep ? formats::kStepName : e.site->name;
  NameStats& s = stats_for(range_names_, range_cache_, name);
  if (s.count == 0) s.category = e.site->category;
  return &s;
}

const NameStats* Names::range(const std::string& name) const {
  const auto it = range_names_.find(name);
  return it != range_names_.end() ? &it->second : nullptr;
}

void Names::add(const ReportEvent& r) {
  if (r.row == nullptr) return;
  const Event& e = *r.event;
  if (e.type != EventType::kGpu) {
    if (is_frame_compile(*e.site)) {
      nesting_[e.thread].frame_compiles = true;
    } else if (e.site->category == Category::kCompile &&
               std::strncmp(e.site->name, formats::framework_events::kCompilePhase,
                            sizeof formats::framework_events::kCompilePhase - 1) == 0) {
      nesting_[e.thread].compile_phases = true;
    }
    add_range(e.thread, *r.row, r.begin_ns, r.end_ns);
    return;
  }
  const GpuActivity& a = *e.gpu;
  NameStats& k = *r.row;
  k.add(r.begin_ns, r.end_ns, 0, 0);
  if (a.declared_bytes > 0 || a.declared_flops > 0) {
    k.declared_bytes += a.declared_bytes;
    k.declared_flops += a.declared_flops;
    k.declared_ns += r.end_ns - r.begin_ns;
  }
  if (a.range != nullptr)
    stats_for(range_names_, range_cache_, a.range->name).gpu_ns += r.end_ns - r.begin_ns;
}

void Names::retire_top(std::uint32_t thread, ThreadNesting& t) {
  const OpenRange r = t.stack.back();
  t.stack.pop_back();
  const bool candidate = r.begin >= slowest_from_ns_ && r.begin < slowest_to_ns_;
  r.stats->add(r.begin, r.end, thread, candidate ? keep_slowest_ : 0,
               std::max<std::int64_t>(r.end - r.begin - r.child_ns, 0));
  ++t.parents[{r.stats, r.linked ? r.parent : nullptr}];
  if (r.linked) return;
  if (t.roots.size() >= 2 * kMaxRoots)
    t.roots.erase(t.roots.begin(), t.roots.begin() + static_cast<std::ptrdiff_t>(kMaxRoots));
  t.roots.push_back({r.begin, r.end, r.stats});
}

void Names::add_range(std::uint32_t thread, NameStats& stats, std::int64_t begin,
                      std::int64_t end) {
  ThreadNesting& t = nesting_[thread];
  const auto inside = [](std::int64_t b, std::int64_t e, std::int64_t outer_b,
                         std::int64_t outer_e) { return outer_b <= b && e <= outer_e; };
  // Parents first: what ended before this range began has all its children.
  while (!t.stack.empty() && t.stack.back().end <= begin) retire_top(thread, t);
  OpenRange r{begin, end, 0, &stats, false, nullptr};
  // Children first: ranges already here that this one contains are its descendants; each whose
  // parent so far is not inside this one is a direct child, moved from that parent to this one.
  while (!t.stack.empty() && inside(t.stack.back().begin, t.stack.back().end, begin, end)) {
    OpenRange& child = t.stack.back();
    OpenRange* parent = t.stack.size() > 1 ? &t.stack[t.stack.size() - 2] : nullptr;
    if (parent == nullptr || !inside(parent->begin, parent->end, begin, end)) {
      if (parent != nullptr && child.linked) parent->child_ns -= child.end - child.begin;
      r.child_ns += child.end - child.begin;
      child.linked = true;
      child.parent = &stats;
    }
    retire_top(thread, t);
  }
  while (!t.roots.empty() && inside(t.roots.back().begin, t.roots.back().end, begin, end)) {
    r.child_ns += t.roots.back().end - t.roots.back().begin;
    --t.parents[{t.roots.back().stats, nullptr}];
    ++t.parents[{t.roots.back().stats, &stats}];
    t.roots.pop_back();
  }
  if (!t.stack.empty() && inside(begin, end, t.stack.back().begin, t.stack.back().end)) {
    t.stack.back().child_ns += end - begin;
    r.linked = true;
    r.parent = t.stack.back().stats;
  }
  t.stack.push_back(r);
}

bool Names::compile_worker(const ThreadNesting& t, const std::string& thread_name) {
  std::string lower = thread_name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("compile") != std::string::npos || lower.find("inductor") != std::string::npos)
    return true;
  return t.compile_phases && !t.frame_compiles;
}

void Names::finish(const TraceContext& trace) {
  for (auto& [thread, t] : nesting_) {
    while (!t.stack.empty()) retire_top(thread, t);
    const std::vector<ThreadInfo>* threads = trace.stats ? &trace.stats->threads : nullptr;
    const std::string& name =
        threads && thread < threads->size() ? (*threads)[thread].name : std::string();
    if (compile_worker(t, name)) continue;
    // At the top level: inside no range, or only inside ranges that seldom repeat (a range
    // around the whole run, or its warm-up).
    for (const auto& [names, n] : t.parents) {
      if (names.second == nullptr || names.second->count < kWrapperRepeats)
        names.first->top_level += n;
    }
  }
  nesting_.clear();
  const auto by_total = [](const NameStats* a, const NameStats* b) {
    return a->total_ns != b->total_ns ? a->total_ns > b->total_ns : a->name < b->name;
  };
  for (const auto& [name, s] : kernel_names_) {
    result_.kernels.push_back(&s);
    result_.gpu_kernel_ns += s.total_ns;
  }
  for (const auto& [name, s] : range_names_) {
    if (s.count > 0) result_.ranges.push_back(&s);
  }
  std::sort(result_.kernels.begin(), result_.kernels.end(), by_total);
  std::sort(result_.ranges.begin(), result_.ranges.end(), by_total);
}

void Names::write_json(const TraceContext&, nlohmann::json* report) const {
  using nlohmann::json;
  const auto names = [](const std::vector<const NameStats*>& rows, bool ranges) {
    json a = json::array();
    for (const NameStats* s : rows) {
      a.push_back({{"name", s->name},
                   {"calls", s->count},
                   {"total_ms", ms(s->total_ns)},
                   {"mean_ms", ms(s->total_ns) / static_cast<double>(s->count)},
                   {"min_ms", ms(s->min_ns)},
                   {"max_ms", ms(s->max_ns)},
                   {"p50_ms", s->quantile_ns(0.5) * 1e-6},
                   {"p99_ms", s->quantile_ns(0.99) * 1e-6},
                   {"gpu_ms", ms(s->gpu_ns)}});
      if (ranges) {
        a.back()["self_ms"] = ms(s->self_ns);
      } else {
        a.back()["class"] = kernel_class_from_name(s->name);
      }
    }
    return a;
  };
  (*report)["kernels"] = names(result_.kernels, false);
  (*report)["ranges"] = names(result_.ranges, true);
}

}  // namespace gpuprobe::analysis
