// The report's guards: each compiled call's dispatch (gpuprobe.torch's "dynamo guards: ..." and
// torch.profiler's "TorchDynamo Cache Lookup"), per frame and against the requests, never counted
// as a compile.
#include "analysis/guards.h"

#include <nlohmann/json.hpp>

#include "analysis/report_trace.h"
#include "formats/framework_events.h"

namespace gpuprobe::test {
namespace {

constexpr CallSite kGuards0{"dynamo guards: [0] forward", "", "", 0, 0, Category::kCompile};
constexpr CallSite kGuards1{"dynamo guards: [1] step", "", "", 0, 0, Category::kCompile};
constexpr CallSite kLookup{"TorchDynamo Cache Lookup", "", "", 0, 0, Category::kTorch};
constexpr CallSite kGraph{"compiled graph (forward)", "", "", 0, 0, Category::kTorch};

TEST_CASE("guard time per call and per frame, against the requests and the graphs' runs") {
  Trace t;
  for (int i = 0; i < 20; ++i) {  // a request of 10 ms: 1 ms of frame 0's guards, then its graph
    const std::int64_t at = i * 20 * kMs;
    t.range(kRequest, at, at + 10 * kMs);
    t.range(kGuards0, at, at + kMs);
    t.range(kGraph, at + kMs, at + 5 * kMs);
    t.range(kGuards1, at + 5 * kMs, at + 5 * kMs + 100 * kUs);  // a second frame, 0.1 ms
  }
  t.range(kLookup, 500 * kMs, 500 * kMs + 50 * kUs);  // a torch.profiler trace's
  const analysis::ReportResult& r = t.run();
  const analysis::Guards* guards = r.find<analysis::Guards>();
  REQUIRE(guards != nullptr);
  const analysis::GuardsResult& g = guards->result();
  CHECK(g.calls == 41);
  CHECK(g.total_ns == 20 * kMs + 2 * kMs + 50 * kUs);
  REQUIRE(g.frames.size() == 3);
  CHECK(g.frames[0].frame == "[0] forward");  // the most time first
  CHECK(g.frames[0].calls == 20);
  CHECK(g.frames[0].max_ns == kMs);
  CHECK(g.frames[1].frame == "[1] step");
  CHECK(g.frames[2].frame == "(cache lookup)");
  CHECK(g.requests == "request");
  CHECK(g.request_count == 20);
  CHECK(g.request_ns == 200 * kMs);
  CHECK(g.graph_runs == 20);
  CHECK(g.graph_ns == 80 * kMs);
  CHECK(r.compile.compiles == 0);  // a call's guards are no compile
  const nlohmann::json j = nlohmann::json::parse(t.report->json());
  CHECK(j["guards"]["calls"] == 41);
  CHECK(j["guards"]["share_of_requests"].get<double>() == Approx(22.05 / 200));
  CHECK(j["guards"]["frames"][0]["mean_ms"].get<double>() == Approx(1.0));
}

TEST_CASE("no guards recorded, no section") {
  Trace t;
  t.range(kRequest, 0, kMs);
  const analysis::ReportResult& r = t.run();
  CHECK(r.find<analysis::Guards>()->describe({}).empty());
}

}  // namespace
}  // namespace gpuprobe::test
