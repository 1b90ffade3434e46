#include "analysis/triton_compile.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "absl/strings/str_format.h"
#include "formats/framework_events.h"

namespace gpuprobe::analysis {
namespace {

namespace fe = formats::framework_events;

bool starts_with(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

void TritonCompile::add(const ReportEvent& r) {
  const Event& e = *r.event;
  TritonCompileResult& c = result_;
  // By name alone: a Perfetto trace's counter tracks carry no category.
  if (e.type == EventType::kCounter) {
    if (starts_with(e.site->name, fe::kTritonStageSeconds)) {
      const std::string_view name = e.site->name;
      c.stage_seconds[std::string(name.substr(sizeof fe::kTritonStageSeconds - 1))] =
          e.value;  // totals: the last value is the answer
    }
    return;
  }
  if (e.type != EventType::kRange || r.row == nullptr) return;  // CPU ranges only
  const double seconds = static_cast<double>(r.end_ns - r.begin_ns) * 1e-9;
  if (starts_with(e.site->name, fe::kTritonCompile)) {
    ++c.compiles;
    c.compile_seconds += seconds;
  } else if (starts_with(e.site->name, fe::kTritonCacheLoad)) {
    ++c.loads;
    c.load_seconds += seconds;
  }
}

void TritonCompile::write_json(const TraceContext&, nlohmann::json* report) const {
  const TritonCompileResult& c = result_;
  (*report)["compile"]["triton"] = {{"compiles", c.compiles},
                                    {"cache_loads", c.loads},
                                    {"compile_seconds", c.compile_seconds},
                                    {"cache_load_seconds", c.load_seconds},
                                    {"stage_seconds", c.stage_seconds}};
}

Section TritonCompile::describe(const TextOptions&) const {
  const TritonCompileResult& t = result_;
  Section s("triton_compile");
  if (t.compiles + t.loads == 0) return s;
  s.line(0, absl::StrFormat("Triton: %u kernel compiles, %.3f ms; %u loads from its cache, %.3f ms",
                            t.compiles, t.compile_seconds * 1e3, t.loads, t.load_seconds * 1e3));
  if (!t.stage_seconds.empty()) {
    std::string text = "stages:";
    for (const char* stage : fe::kTritonStages) {
      const auto it = t.stage_seconds.find(stage);
      if (it != t.stage_seconds.end())
        absl::StrAppendFormat(&text, " %s %.3f ms", stage, it->second * 1e3);
    }
    s.line(1, std::move(text));
  }
  return s;
}

}  // namespace gpuprobe::analysis
