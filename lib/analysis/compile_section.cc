// compile.h's sections of the report: torch.compile's, and the frames that fell back to eager;
// their words, once, for the terminal, the JSON and the page (section.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "absl/strings/str_format.h"
#include "analysis/compile.h"
#include "formats/framework_events.h"

namespace gpuprobe::analysis {

namespace fe = formats::framework_events;

Section describe_eager_fallbacks(const CompileResult& c) {
  // A frame that silently ran eagerly looks like a compile that worked: said first.
  Section s("eager_fallbacks", false);
  const std::vector<std::string>& fallbacks = c.fallbacks;
  if (fallbacks.empty()) return s;
  s.line(0, absl::StrFormat("EAGER FALLBACK: %u torch.compile frame%s failed to compile and ran "
                            "eagerly:",
                            fallbacks.size(), plural(fallbacks.size())));
  for (const std::string& f : fallbacks) s.line(1, f);
  return s;
}

namespace {

// compare_modes()'s table: per torch.compile mode, what it cost and what it gained. The columns
// and their headings are fe::kModeColumns'; "passed" is said after the row instead.
void describe_modes(const std::vector<CompileResult::ModeRow>& modes, Section* s) {
  const auto get = [](const CompileResult::ModeRow& m, const fe::ModeColumn& c) {
    const auto it = m.values.find(c.mark);
    return it == m.values.end() || (c.negative_unknown && it->second < 0) ? std::nan("")
                                                                          : it->second * c.scale;
  };
  const auto shown = [](const fe::ModeColumn& c) { return std::string_view(c.key) != "passed"; };
  std::vector<Column> columns = {{"mode", 16, true, true}};
  for (const fe::ModeColumn& c : fe::kModeColumns) {
    // As wide as its heading, and at least a number's width.
    if (shown(c))
      columns.push_back({c.heading, std::max(static_cast<int>(std::strlen(c.heading)), 8)});
  }
  columns.push_back({"", 0, true});  // whether the mode's result was outside the tolerance
  Table& t = s->table(1, std::move(columns));
  t.lead = "modes (compare_modes): ";
  t.separator = "  ";
  const fe::ModeColumn& passed = *fe::mode_column("passed");
  for (const CompileResult::ModeRow& m : modes) {
    Row row{{m.mode}, {}};
    for (const fe::ModeColumn& c : fe::kModeColumns) {
      if (!shown(c)) continue;
      const double v = get(m, c);
      const std::string_view key = c.key;
      if (std::isnan(v)) {
        row.cells.push_back(key == "break_even_calls" ? "never" : "-");
      } else if (key == "break_even_calls" || key == "graph_breaks" || key == "compiles") {
        row.cells.push_back(absl::StrFormat("%.0f", std::ceil(v)));
      } else if (key == "max_abs_error") {
        row.cells.push_back(absl::StrFormat("%.3g", v));
      } else if (key == "execute_ms") {
        row.cells.push_back(absl::StrFormat("%.4f", v));
      } else if (key == "speedup") {
        row.cells.push_back(absl::StrFormat("%.2f", v));
      } else {
        row.cells.push_back(absl::StrFormat("%.3f", v));
      }
    }
    row.cells.push_back(get(m, passed) == 0 ? "(outside the tolerance)" : "");
    t.rows.push_back(std::move(row));
  }
}

}  // namespace

Section describe_torch_compile(const CompileResult& c, std::int64_t trace_ns) {
  Section s("torch_compile");
  if (c.compiles == 0 && c.recompiles.empty() && c.graph_breaks.empty() && c.fallbacks.empty() &&
      c.limit_hits.empty() && c.restarts.empty())
    return s;
  std::string head = absl::StrFormat(
      "torch.compile: %u compiles, T_compile %.3f ms (%.1f%% of the trace)", c.compiles,
      ms(c.compile_ns), trace_ns > 0 ? 100.0 * ms(c.compile_ns) / ms(trace_ns) : 0.0);
  if (c.steps > 0) {
    absl::StrAppendFormat(&head, ", amortised over %u steps: %.3f ms per step", c.steps,
                          ms(c.compile_ns) / static_cast<double>(c.steps));
  }
  s.line(0, std::move(head));
  if (c.runs > 0) {
    s.line(1, absl::StrFormat("compiled code ran m = %u times: T_execute %.3f ms, p = T_execute / "
                              "(trace - T_compile) = %.3f / %.3f ms = %.1f%%",
                              c.runs, ms(c.run_ns), ms(c.run_ns), ms(c.base_ns), 100 * c.share));
    s.line(1, absl::StrFormat("amortised compile cost B = T_compile / m = %.3f ms per run",
                              c.amortised_ms));
    if (c.amdahl_bound > 0) {
      s.line(1, absl::StrFormat("Amdahl: the other %.1f%% (eager code, graph breaks, data, waits) "
                                "caps the gain from faster compiled code at %.2fx",
                                100 * (1 - c.share), c.amdahl_bound));
    }
  }
  if (c.cache_hits >= 0 && c.cache_hits + c.cache_misses > 0) {
    s.line(1,
           absl::StrFormat("cache: %.0f hits, %.0f misses (%.0f%% hit rate)", c.cache_hits,
                           c.cache_misses, 100 * c.cache_hits / (c.cache_hits + c.cache_misses)));
  }
  // Where the compile time went, by phase group, in the order a compile goes through them.
  if (!c.phase_seconds.empty()) {
    double total = 0;
    for (const auto& [group, seconds] : c.phase_seconds) total += seconds;
    std::string text = absl::StrFormat("phases (own time, %.3f ms in all):", total * 1e3);
    for (const char* group : fe::kCompilePhaseGroups) {
      const auto it = c.phase_seconds.find(group);
      if (it == c.phase_seconds.end()) continue;
      absl::StrAppendFormat(&text, " %s %.3f ms (%.0f%%)", group, it->second * 1e3,
                            total > 0 ? 100 * it->second / total : 0.0);
    }
    s.line(1, std::move(text));
  }
  // Per layer, each miss with the key components that changed since the frame's last compile.
  for (const auto& [name, layer] : c.cache_layers) {
    std::string text =
        absl::StrFormat("%s cache: %u hits, %u misses", name, layer.hits, layer.misses);
    if (layer.bypasses > 0) absl::StrAppendFormat(&text, ", %u bypassed", layer.bypasses);
    s.line(1, std::move(text));
    for (const auto& miss : layer.explained)
      s.line(2, absl::StrFormat("%s: %s", miss.compile_id, miss.what));
  }
  if (c.graph_ops > 0 && c.kernels_generated > 0) {
    s.line(1, absl::StrFormat("ops per generated kernel K = %.1f (%.0f FX ops, %.0f kernels)",
                              c.graph_ops / c.kernels_generated, c.graph_ops, c.kernels_generated));
  }
  // The code each compile generated: a slow kernel of the trace leads to its source.
  for (const auto& m : c.generated) {
    std::string text =
        absl::StrFormat("generated by %s: %s (%u kernels", m.compile_id, m.path, m.kernels.size());
    if (m.graph_runs >= 0) absl::StrAppendFormat(&text, "; its graph ran %d times", m.graph_runs);
    if (m.kernel_runs > 0) {
      absl::StrAppendFormat(&text, "; in this trace its kernels ran %u times, %.3f ms on the GPU",
                            m.kernel_runs, ms(m.kernel_gpu_ns));
    }
    s.line(1, text + ")");
  }
  if (c.speedup > 0)
    s.line(1,
           absl::StrFormat("speedup S = T_eager / T_compiled = %.2f (from compare())", c.speedup));
  if (c.program_speedup > 0)
    s.line(1, absl::StrFormat("whole program vs eager: (1 - p) + p S = %.2fx", c.program_speedup));
  if (c.break_even_runs > 0) {
    s.line(1, absl::StrFormat("the compiles pay for themselves after %.0f runs (%u so far)",
                              c.break_even_runs, c.runs));
  }
  if (!c.modes.empty()) describe_modes(c.modes, &s);
  s.line(1, absl::StrFormat("recompiles: %u", c.recompiles.size()));
  for (const std::string& reason : c.recompiles) s.line(2, reason);
  if (!c.limit_hits.empty()) {
    s.line(1, absl::StrFormat("recompile limit hit %u time%s (those frames run eagerly from then "
                              "on)",
                              c.limit_hits.size(), plural(c.limit_hits.size())));
    for (const std::string& hit : c.limit_hits) s.line(2, hit);
  }
  if (!c.fallbacks.empty())
    s.line(1, absl::StrFormat("eager fallbacks: %u (listed above)", c.fallbacks.size()));
  s.line(1, absl::StrFormat("restarts (Dynamo analysed a frame again): %u", c.restarts.size()));
  for (const std::string& restart : c.restarts) s.line(2, restart);
  std::uint64_t breaks = 0;
  for (const auto& [reason, n] : c.graph_breaks) breaks += n;
  s.line(1, absl::StrFormat("graph breaks: %u, %u distinct", breaks, c.graph_breaks.size()));
  for (const auto& [reason, n] : c.graph_breaks) s.line(2, absl::StrFormat("%ux %s", n, reason));
  if (const CompileResult::BreakCost& b = c.break_cost; b.returns > 0) {
    s.line(1, absl::StrFormat("graph breaks at run time: T_overhead = N_break x T_fallback = %u x "
                              "%.3f ms = %.3f ms of eager code between compiled graphs (median "
                              "%.3f ms; %.1f%% of the compiled code's time with it)",
                              b.returns, b.fallback_ms, ms(b.overhead_ns), ms(b.median_ns),
                              100.0 * b.share));
  }
  return s;
}

}  // namespace gpuprobe::analysis
