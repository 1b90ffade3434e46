// gpuprobe.torch's and watch_gc's events as metrics of their own (names from
// formats/framework_events.h), and only when something produced them.
#include "metrics/framework_metrics.h"

#include <string>
#include <vector>

#include "formats/compile_marks.h"
#include "formats/framework_events.h"
#include "metrics/session_metrics.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe::metrics {
namespace {

using testing::has_line;

namespace fe = formats::framework_events;

const TimeBase kTime(0, 0, 1.0);  // a tick is a nanosecond

TEST_CASE("compiles, recompiles, graph breaks, GC pauses and allocator figures get their metrics") {
  const CallSite compile0{"torch.compile [0/0]", "", "", 0, 0, Category::kCompile};
  const CallSite compile1{"torch.compile [0/1]", "", "", 0, 0, Category::kCompile};
  const CallSite recompile{
      "recompile [0/1]: tensor 'x' size mismatch", "", "", 0, 0, Category::kCompile};
  const CallSite graph_break{"graph break: print [in f]", "", "", 0, 0, Category::kCompile};
  const CallSite hits{fe::kCacheHits, "", "", 0, 0, Category::kCompile};
  const CallSite gen0{"gc gen0", "", "", 0, 0, Category::kGc};
  const CallSite gen2{"gc gen2", "", "", 0, 0, Category::kGc};
  const CallSite reserved{fe::kReservedBytes, "", "", 0, 0, Category::kAllocator};
  const CallSite ooms{fe::kOoms, "", "", 0, 0, Category::kAllocator};
  const CallSite module{"Linear", "", "", 0, 0, Category::kTorch};
  const CallSite request{"request", "", "", 0, 0, Category::kApp};
  std::vector<Event> events = {
      {EventType::kRange, 0, &compile0, 0, 2'000'000'000, 0.0},  // 2 s
      {EventType::kInstant, 0, &recompile, 5, 5, 0.0},
      {EventType::kRange, 0, &compile1, 0, 300'000'000, 0.0},  // 0.3 s
      {EventType::kInstant, 0, &graph_break, 6, 6, 0.0},
      {EventType::kInstant, 0, &graph_break, 7, 7, 0.0},
      {EventType::kCounter, 0, &hits, 8, 8, 3.0},
      {EventType::kCounter, 0, &hits, 9, 9, 4.0},         // running totals: the last counts
      {EventType::kRange, 0, &gen0, 0, 30'000, 0.0},      // 30 us
      {EventType::kRange, 0, &gen2, 0, 40'000'000, 0.0},  // 40 ms
      {EventType::kCounter, 0, &reserved, 10, 10, 1048576.0},
      {EventType::kCounter, 0, &ooms, 11, 11, 1.0},
      {EventType::kRange, 0, &module, 0, 1000, 0.0},  // a module range: not a range metric
      {EventType::kRange, 0, &request, 0, 1000, 0.0}};
  const std::vector<ThreadInfo> threads(1);
  SessionMetrics m;
  m.add(EventBatch{events.data(), events.size(), &kTime, &threads});
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_compile_duration_seconds_count 2"));
  CHECK(has_line(text, "gpuprobe_compile_duration_seconds_bucket{le=\"0.5\"} 1"));
  CHECK(has_line(text, "gpuprobe_compile_duration_seconds_bucket{le=\"2\"} 2"));
  CHECK(has_line(text, "gpuprobe_compile_recompiles_total 1"));
  CHECK(has_line(text, "gpuprobe_compile_graph_breaks_total 2"));
  CHECK(has_line(text, "gpuprobe_compile_eager_fallbacks_total 0"));
  CHECK(has_line(text, "gpuprobe_compile_cache_hits_total 4"));
  CHECK(has_line(text, "gpuprobe_gc_pause_seconds_count{generation=\"0\"} 1"));
  CHECK(has_line(text, "gpuprobe_gc_pause_seconds_bucket{generation=\"2\",le=\"0.02\"} 0"));
  CHECK(has_line(text, "gpuprobe_gc_pause_seconds_bucket{generation=\"2\",le=\"0.05\"} 1"));
  CHECK(has_line(text, "# TYPE gpuprobe_cuda_reserved_bytes gauge"));
  CHECK(has_line(text, "gpuprobe_cuda_reserved_bytes 1048576"));
  CHECK(has_line(text, "gpuprobe_cuda_ooms_total 1"));
  // Per-compile names and module names are not range names; the program's own range is.
  CHECK(text.find("name=\"torch.compile") == std::string::npos);
  CHECK(text.find("name=\"gc gen") == std::string::npos);
  CHECK(text.find("name=\"Linear\"") == std::string::npos);
  CHECK(has_line(text, "gpuprobe_range_duration_seconds_count{name=\"request\"} 1"));
}

TEST_CASE("recompiles by guard kind, cache lookups per layer, phase times and JAX's compiles") {
  const CallSite size{
      "recompile 0/1: 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16",
      "",
      "",
      0,
      0,
      Category::kCompile};
  const CallSite dtype{
      "recompile 0/2: 0/0: tensor 'x' dtype mismatch. expected Float, actual Double",
      "",
      "",
      0,
      0,
      Category::kCompile};
  const CallSite limit{"recompile limit hit: torch._dynamo hit config.recompile_limit (8)",
                       "",
                       "",
                       0,
                       0,
                       Category::kCompile};
  const CallSite fx_miss{"cache miss 0/1 FX graph: example_inputs[0] float32 (8,4) -> (16,4)",
                         "",
                         "",
                         0,
                         0,
                         Category::kCompile};
  const CallSite fx_hit{"cache hit 0/2 FX graph", "", "", 0, 0, Category::kCompile};
  const CallSite aot_bypass{
      "cache miss 0/1 AOTAutograd: bypassed: unsupported", "", "", 0, 0, Category::kCompile};
  const CallSite dynamo{"compile phase seconds: Dynamo", "", "", 0, 0, Category::kCompile};
  const CallSite odd_phase{"compile phase seconds: x\"y", "", "", 0, 0, Category::kCompile};
  const CallSite jax_trace{"jax trace: f", "", "", 0, 0, Category::kCompile};
  const CallSite jax_compile{"jax backend compile: jit(f)", "", "", 0, 0, Category::kCompile};
  const CallSite jax_load{"jax cache load: jit(f)", "", "", 0, 0, Category::kCompile};
  const CallSite jax_hit{fe::kJaxCacheHit, "", "", 0, 0, Category::kCompile};
  const CallSite jax_miss{fe::kJaxCacheMiss, "", "", 0, 0, Category::kCompile};
  std::vector<Event> events = {
      {EventType::kInstant, 0, &size, 1, 1, 0.0},
      {EventType::kInstant, 0, &size, 2, 2, 0.0},
      {EventType::kInstant, 0, &dtype, 3, 3, 0.0},
      {EventType::kInstant, 0, &limit, 4, 4, 0.0},
      {EventType::kInstant, 0, &fx_miss, 5, 5, 0.0},
      {EventType::kInstant, 0, &fx_hit, 6, 6, 0.0},
      {EventType::kInstant, 0, &aot_bypass, 7, 7, 0.0},
      {EventType::kCounter, 0, &dynamo, 8, 8, 0.5},
      {EventType::kCounter, 0, &dynamo, 9, 9, 1.25},          // totals: the last counts
      {EventType::kCounter, 0, &odd_phase, 9, 9, 0.5},        // not a phase gpuprobe.torch writes
      {EventType::kRange, 0, &jax_trace, 0, 3'000'000, 0.0},  // 3 ms
      {EventType::kRange, 0, &jax_compile, 0, 700'000'000, 0.0},  // 0.7 s
      {EventType::kRange, 0, &jax_load, 0, 2'000'000, 0.0},       // 2 ms
      {EventType::kInstant, 0, &jax_miss, 10, 10, 0.0},
      {EventType::kInstant, 0, &jax_hit, 11, 11, 0.0}};
  const std::vector<ThreadInfo> threads(1);
  SessionMetrics m;
  m.add(EventBatch{events.data(), events.size(), &kTime, &threads});
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_compile_recompiles_total 3"));  // the limit hit is none
  CHECK(has_line(text, "gpuprobe_compile_recompile_limit_hits_total 1"));
  CHECK(has_line(text, "gpuprobe_compile_recompile_reasons_total{reason=\"size\"} 2"));
  CHECK(has_line(text, "gpuprobe_compile_recompile_reasons_total{reason=\"dtype\"} 1"));
  CHECK(has_line(text,
                 "gpuprobe_compile_cache_lookups_total{layer=\"FX graph\",outcome=\"miss\"} 1"));
  CHECK(
      has_line(text, "gpuprobe_compile_cache_lookups_total{layer=\"FX graph\",outcome=\"hit\"} 1"));
  CHECK(has_line(
      text, "gpuprobe_compile_cache_lookups_total{layer=\"AOTAutograd\",outcome=\"bypass\"} 1"));
  CHECK(has_line(text, "gpuprobe_compile_phase_seconds_total{phase=\"Dynamo\"} 1.25"));
  CHECK(has_line(text, "gpuprobe_compile_phase_seconds_total{phase=\"other\"} 0.5"));
  CHECK(has_line(text, "gpuprobe_jax_compile_duration_seconds_count{phase=\"trace\"} 1"));
  CHECK(has_line(
      text,
      "gpuprobe_jax_compile_duration_seconds_bucket{phase=\"backend compile\",le=\"0.5\"} 0"));
  CHECK(has_line(
      text, "gpuprobe_jax_compile_duration_seconds_bucket{phase=\"backend compile\",le=\"1\"} 1"));
  CHECK(has_line(text, "gpuprobe_jax_compile_duration_seconds_count{phase=\"cache load\"} 1"));
  CHECK(has_line(text, "gpuprobe_jax_compilation_cache_lookups_total{outcome=\"hit\"} 1"));
  CHECK(has_line(text, "gpuprobe_jax_compilation_cache_lookups_total{outcome=\"miss\"} 1"));
  // JAX's compiles are not torch.compile's.
  CHECK(has_line(text, "gpuprobe_compile_duration_seconds_count 0"));
}

TEST_CASE("the kind of guard a recompile failed is one of a few") {
  CHECK(std::string(formats::recompile_reason_class(
            "0/0: tensor 'x' stride mismatch at index 0. expected 4, actual 1")) == "stride");
  CHECK(std::string(formats::recompile_reason_class(
            "0/0: BACKEND_MATCH failure: torch.compile detected different backend")) == "backend");
  CHECK(std::string(formats::recompile_reason_class("0/0: L['n'] == 3")) == "value");
  CHECK(std::string(formats::recompile_reason_class("0/0: len(L['xs']) == 2")) == "length");
  CHECK(std::string(formats::recompile_reason_class("0/0: ___check_obj_id(L['m'], 1402)")) ==
        "object identity");
  CHECK(std::string(formats::recompile_reason_class("something new in torch 3")) == "other");
}

TEST_CASE("compiled calls' guard time per frame, the label set bounded, never a compile") {
  std::vector<CallSite> sites;
  sites.reserve(FrameworkMetrics::kMaxGuardFrames + 4);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < FrameworkMetrics::kMaxGuardFrames + 3; ++i)
    names.push_back(std::string(fe::kDynamoGuards) + "[" + std::to_string(i) + "] f");
  for (const std::string& name : names)
    sites.push_back(CallSite{name.c_str(), "", "", 0, 0, Category::kCompile});
  std::vector<Event> events;
  for (int call = 0; call < 3; ++call)  // frame [0]: three calls of 100 us, 200 us, 300 us
    events.push_back({EventType::kRange, 0, &sites[0], 0, (call + 1) * 100'000, 0.0});
  for (const CallSite& site : sites) events.push_back({EventType::kRange, 0, &site, 0, 10, 0.0});
  const std::vector<ThreadInfo> threads(1);
  SessionMetrics m;
  m.add(EventBatch{events.data(), events.size(), &kTime, &threads});
  const std::string text = m.exposition();
  CAPTURE(text);
  CHECK(has_line(text, "gpuprobe_compile_guard_seconds_count{frame=\"[0] f\"} 4"));
  CHECK(text.find("gpuprobe_compile_guard_seconds_sum{frame=\"[0] f\"} 0.00060001") !=
        std::string::npos);
  CHECK(has_line(text, "gpuprobe_compile_guard_seconds_count{frame=\"[31] f\"} 1"));
  CHECK(text.find("frame=\"[32] f\"") == std::string::npos);  // past the 32 labels kept
  CHECK(has_line(text, "gpuprobe_compile_guard_seconds_count{frame=\"other\"} 3"));
  CHECK(text.find("gpuprobe_compile_duration_seconds") == std::string::npos);  // no compile
}

TEST_CASE("a program that never compiles, collects or allocates has none of those families") {
  SessionMetrics m;
  const std::string text = m.exposition();
  CHECK(text.find("gpuprobe_compile_") == std::string::npos);
  CHECK(text.find("gpuprobe_gc_") == std::string::npos);
  CHECK(text.find("gpuprobe_cuda_") == std::string::npos);
  CHECK(text.find("gpuprobe_collector_cpu_seconds_total") != std::string::npos);
}

}  // namespace
}  // namespace gpuprobe::metrics
