// torch.compile's accounting: compiles, the marks gpuprobe.torch writes, counters, and the
// compiled runs that give the amortised cost, the compiled share and Amdahl's bound.
#include "analysis/compile.h"

#include <nlohmann/json.hpp>

#include "analysis/jax_compile.h"
#include "analysis/report_trace.h"
#include "analysis/triton_compile.h"
#include "formats/framework_events.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("compiled runs give m, T_execute, B, the compiled share and Amdahl's bound") {
  Trace t;
  // A 100 ms compile, then 10 steps of 10 ms, each running a 4 ms compiled graph inside a 5 ms
  // Dynamo frame; compare() measured S = 2.
  t.range(kCompile, 0, 100 * kMs);
  for (int i = 0; i < 10; ++i) {
    const std::int64_t at = (100 + 10 * i) * kMs;
    t.range(kStep, at, at + 10 * kMs);
    t.range(kFrameRun, at + kMs, at + 6 * kMs);
    t.range(kGraphRun, at + 2 * kMs, at + 6 * kMs);
  }
  t.events.push_back(Event{EventType::kCounter, 0, &kSpeedup, 200 * kMs, 200 * kMs, 2.0});
  const analysis::CompileResult& c = t.run().compile;
  CHECK(c.compiles == 1);
  CHECK(c.compile_ns == 100 * kMs);
  CHECK(c.steps == 10);
  CHECK(c.runs == 10);  // the graph runs, not the frames that hold them
  CHECK(c.run_ns == 40 * kMs);
  CHECK(c.base_ns == 100 * kMs);
  CHECK(c.speedup == 2);
  CHECK(c.amortised_ms == Approx(10));
  CHECK(c.share == Approx(0.4));
  CHECK(c.amdahl_bound == Approx(1 / 0.6));
  CHECK(c.program_speedup == Approx(0.6 + 0.4 * 2));
  CHECK(c.break_even_runs == Approx(100.0 / (4 * (2 - 1))));
}

TEST_CASE("the share of compiled runs after the last compile tells warm-up from late compiles") {
  static constexpr CallSite again{"torch.compile 0/2", "", "", 0, 0, Category::kCompile};
  // 100 requests each running a 1 ms compiled graph; 3 compiles of 50 ms at requests 0, 1 and
  // `last`. The compile arrives before or after the runs it precedes (rings write a range when
  // it ends; files may be sorted by start).
  for (const int last : {2, 80}) {
    for (const bool compile_first : {true, false}) {
      CAPTURE(last, compile_first);
      Trace t;
      std::int64_t at = 0;
      for (int i = 0; i < 100; ++i) {
        const bool compiles = i <= 1 || i == last;
        const std::int64_t run = at + (compiles ? 50 : 0) * kMs;
        const CallSite& site = i == 0 ? kCompile : again;
        if (compiles && compile_first) t.range(site, at, at + 50 * kMs);
        t.range(kGraphRun, run, run + kMs);
        if (compiles && !compile_first) t.range(site, at, at + 50 * kMs);
        t.range(kRequest, at, run + 2 * kMs);
        at = run + 3 * kMs;
      }
      const analysis::CompileResult& c = t.run().compile;
      CHECK(c.compiles == 3);
      CHECK(c.runs == 100);
      CHECK(c.after_last_compile == Approx((100.0 - last) / 100));
    }
  }
}

TEST_CASE("generated code: its graph's runs where the trace tells them apart, on CPU too") {
  namespace fe = formats::framework_events;
  static constexpr CallSite kBackward{fe::kCompiledGraphBackward, "", "", 0, 0, Category::kTorch};
  // One compile's forward and backward modules (CPU kernels: no GPU records), 17 training steps.
  static const std::string forward = std::string(fe::kGeneratedCode) + "0/0: /t/fw.py: cpp_fused_0";
  static const std::string backward =
      std::string(fe::kGeneratedCode) + "0/0: /t/bw.py: cpp_fused_1";
  static const CallSite marks[] = {{forward.c_str(), "", "", 0, 0, Category::kCompile},
                                   {backward.c_str(), "", "", 0, 0, Category::kCompile}};
  const auto steps = [&](Trace& t) {
    t.range(kCompile, 0, 100 * kMs);
    for (const CallSite& m : marks)
      t.events.push_back(Event{EventType::kInstant, 0, &m, 50, 50, 0});
    for (int i = 0; i < 17; ++i) {
      const std::int64_t at = (100 + 10 * i) * kMs;
      t.range(kGraphRun, at, at + 4 * kMs);
      t.range(kBackward, at + 5 * kMs, at + 9 * kMs);
    }
  };
  Trace t;
  steps(t);
  const analysis::CompileResult& c = t.run().compile;
  REQUIRE(c.generated.size() == 2);
  CHECK(c.generated[0].graph_runs == 17);
  CHECK(c.generated[1].graph_runs == 17);
  CHECK(c.generated[0].kernel_runs == 0);  // its kernels' launches: none on the GPU
  // A second compile's module: the runs no longer tell whose graph ran.
  static const std::string other = std::string(fe::kGeneratedCode) + "1/0: /t/g.py: cpp_fused_2";
  static const CallSite other_mark{other.c_str(), "", "", 0, 0, Category::kCompile};
  Trace two;
  steps(two);
  two.events.push_back(Event{EventType::kInstant, 0, &other_mark, 60, 60, 0});
  const analysis::CompileResult& c2 = two.run().compile;
  REQUIRE(c2.generated.size() == 3);
  for (const auto& m : c2.generated) CHECK(m.graph_runs == -1);
  const nlohmann::json j = nlohmann::json::parse(t.report->json());
  CHECK(j["compile"]["generated_code"][0]["graph_runs"] == 17);
  CHECK(nlohmann::json::parse(two.report->json())["compile"]["generated_code"][0]["graph_runs"]
            .is_null());
}

TEST_CASE("marks: recompiles with reasons, the limit warning apart, fallbacks, graph breaks") {
  namespace fe = formats::framework_events;
  static const std::string recompile = std::string(fe::kRecompile) + "0/1: size mismatch";
  static const std::string limit = std::string(fe::kRecompileLimitHit) + "torch._dynamo hit limit";
  static const std::string fallback = std::string(fe::kEagerFallback) + "1/0: f.py:3: boom";
  static const std::string graph_break = std::string(fe::kGraphBreak) + "print()";
  static const CallSite sites[] = {{recompile.c_str(), "", "", 0, 0, Category::kCompile},
                                   {limit.c_str(), "", "", 0, 0, Category::kCompile},
                                   {fallback.c_str(), "", "", 0, 0, Category::kCompile},
                                   {graph_break.c_str(), "", "", 0, 0, Category::kCompile},
                                   {graph_break.c_str(), "", "", 0, 0, Category::kCompile}};
  static constexpr CallSite kHits{fe::kCacheHits, "", "", 0, 0, Category::kCompile};
  Trace t;
  std::uint64_t at = 0;
  for (const CallSite& site : sites) {
    t.events.push_back(Event{EventType::kInstant, 0, &site, at, at, 0.0});
    at += 10;
  }
  t.events.push_back(Event{EventType::kCounter, 0, &kHits, at, at, 3.0});
  t.events.push_back(Event{EventType::kCounter, 0, &kHits, at + 1, at + 1, 7.0});
  const analysis::CompileResult& c = t.run().compile;
  REQUIRE(c.recompiles.size() == 1);  // the limit warning shares the prefix and is not one
  CHECK(c.recompiles[0] == "0/1: size mismatch");
  REQUIRE(c.limit_hits.size() == 1);
  REQUIRE(c.fallbacks.size() == 1);
  CHECK(c.fallbacks[0] == "1/0: f.py:3: boom");
  REQUIRE(c.graph_breaks.size() == 1);
  CHECK(c.graph_breaks.at("print()") == 2);
  CHECK(c.cache_hits == 7);     // totals: the last value
  CHECK(c.cache_misses == -1);  // absent
  CHECK(c.runs == 0);
  CHECK(c.amortised_ms == -1);
}

TEST_CASE("torch.profiler's Dynamo spans count as compiles; its compile ids name recompiles") {
  static constexpr CallSite kFrameCompile{"entire_frame_compile", "", "", 0, 0, Category::kApp};
  static constexpr CallSite kFirst{
      "entire_frame_compile_data: fn_name=f, compile_id=0/0", "", "", 0, 0, Category::kApp};
  static constexpr CallSite kSecond{
      "entire_frame_compile_data: fn_name=f, compile_id=0/1", "", "", 0, 0, Category::kApp};
  Trace t;
  t.range(kFrameCompile, 0, 5 * kMs);
  t.range(kFirst, 0, kMs);
  t.range(kFrameCompile, 10 * kMs, 12 * kMs);
  t.range(kSecond, 10 * kMs, 11 * kMs);
  const analysis::CompileResult& c = t.run().compile;
  CHECK(c.compiles == 2);
  CHECK(c.compile_ns == 7 * kMs);
  REQUIRE(c.recompiles.size() == 1);
  CHECK(c.recompiles[0].rfind("0/1: ", 0) == 0);
}

TEST_CASE("JAX's and Triton's compiles are counted apart from torch.compile's") {
  static constexpr CallSite torch_compile{"torch.compile 0/0", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite jax_trace{"jax trace: f", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite jax_compile{
      "jax backend compile: jit(f)", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite jax_load{"jax cache load: jit(g)", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite jax_hit{
      formats::framework_events::kJaxCacheHit, "", "", 0, 0, Category::kCompile};
  static constexpr CallSite triton_compile{
      "triton compile: add_kernel", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite triton_load{
      "triton cache load: add_kernel", "", "", 0, 0, Category::kCompile};
  static constexpr CallSite cubin{"triton stage seconds: cubin", "", "", 0, 0, Category::kCompile};
  Trace t;
  t.range(torch_compile, 0, 100 * kMs);
  t.range(jax_trace, 100 * kMs, 102 * kMs);
  t.range(jax_compile, 102 * kMs, 150 * kMs);
  t.range(jax_load, 150 * kMs, 151 * kMs);
  t.events.push_back(Event{EventType::kInstant, 0, &jax_hit, 150 * kMs, 0, 0.0});
  t.range(triton_compile, 200 * kMs, 900 * kMs);
  t.events.push_back(Event{EventType::kCounter, 0, &cubin, 900 * kMs, 900 * kMs, 0.05});
  t.range(triton_load, 950 * kMs, 951 * kMs);
  const analysis::ReportResult& r = t.run();
  const analysis::CompileResult& c = r.compile;
  CHECK(c.compiles == 1);  // torch.compile's only
  CHECK(c.compile_ns == 100 * kMs);
  const analysis::JaxCompile* jax = r.find<analysis::JaxCompile>();
  const analysis::TritonCompile* triton = r.find<analysis::TritonCompile>();
  REQUIRE(jax != nullptr);
  REQUIRE(triton != nullptr);
  CHECK(jax->result().compiles == 1);
  CHECK(jax->result().loads == 1);
  CHECK(jax->result().cache_hits == 1);
  CHECK(jax->result().phase_seconds.at("trace") == Approx(0.002));
  CHECK(jax->result().phase_seconds.at("backend compile") == Approx(0.048));
  CHECK(triton->result().compiles == 1);
  CHECK(triton->result().loads == 1);
  CHECK(triton->result().compile_seconds == Approx(0.7));
  CHECK(triton->result().load_seconds == Approx(0.001));
  CHECK(triton->result().stage_seconds.at("cubin") == Approx(0.05));
}

}  // namespace
}  // namespace gpuprobe::test
