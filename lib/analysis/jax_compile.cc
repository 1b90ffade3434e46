#include "analysis/jax_compile.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "absl/strings/str_format.h"
#include "formats/compile_marks.h"
#include "formats/framework_events.h"

namespace gpuprobe::analysis {
namespace {
namespace fe = formats::framework_events;
}  // namespace

void JaxCompile::add(const ReportEvent& r) {
  const Event& e = *r.event;
  if (e.type == EventType::kInstant && e.site->category == Category::kCompile) {
    result_.cache_hits += std::strcmp(e.site->name, fe::kJaxCacheHit) == 0;
    result_.cache_misses += std::strcmp(e.site->name, fe::kJaxCacheMiss) == 0;
    return;
  }
  if (e.type != EventType::kRange || r.row == nullptr) return;  // CPU ranges only
  const std::string_view phase = formats::jax_phase(e.site->name);
  if (phase.empty()) return;
  result_.phase_seconds[std::string(phase)] += static_cast<double>(r.end_ns - r.begin_ns) * 1e-9;
  result_.compiles += phase == fe::kJaxBackendCompile;
  result_.loads += phase == fe::kJaxCacheLoad;
}

void JaxCompile::write_json(const TraceContext&, nlohmann::json* report) const {
  const JaxCompileResult& c = result_;
  (*report)["compile"]["jax"] = {
      {"compiles", c.compiles},           {"cache_loads", c.loads},
      {"cache_hits", c.cache_hits},       {"cache_misses", c.cache_misses},
      {"phase_seconds", c.phase_seconds}, {"phase_order", fe::kJaxPhases}};
}

Section JaxCompile::describe(const TextOptions&) const {
  const JaxCompileResult& jax = result_;
  Section s("jax_compile");
  if (jax.compiles + jax.loads + jax.cache_hits + jax.cache_misses == 0) return s;
  double compile_s = 0;
  for (const auto& [phase, seconds] : jax.phase_seconds)
    compile_s += phase == fe::kJaxCacheLoad ? 0 : seconds;
  std::string head =
      absl::StrFormat("JAX: %u compiles, %.3f ms compiling", jax.compiles, compile_s * 1e3);
  for (const char* phase : fe::kJaxPhases) {
    const auto it = jax.phase_seconds.find(phase);
    if (it != jax.phase_seconds.end())
      absl::StrAppendFormat(&head, "; %s %.3f ms", phase, it->second * 1e3);
  }
  s.line(0, std::move(head));
  s.line(1, absl::StrFormat("persistent cache: %u hits (%u loads), %u misses", jax.cache_hits,
                            jax.loads, jax.cache_misses));
  return s;
}

}  // namespace gpuprobe::analysis
