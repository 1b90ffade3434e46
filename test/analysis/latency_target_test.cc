// Which range the jitter analysis explains by default: the program's own top-level requests or
// steps, never the framework's or the compiler's ranges (however heavy), nor ranges on compile
// workers' threads; and the report says why it chose the one it chose.
#include <string>

#include "analysis/jitter.h"
#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

constexpr CallSite kPhase{"compile phase: compile_file", "", "", 0, 0, Category::kCompile};
constexpr CallSite kAtenCopy{"aten::copy_", "", "", 0, 0, Category::kTorch};
constexpr CallSite kServe{"serve", "", "", 0, 0, Category::kPython};
constexpr CallSite kBatch{"batch", "", "", 0, 0, Category::kApp};
constexpr CallSite kModel{"GPT2LMHeadModel", "", "", 0, 0, Category::kTorch};
constexpr CallSite kBlock{"GPT2LMHeadModel.transformer", "", "", 0, 0, Category::kTorch};
constexpr CallSite kDataNext{"dataloader next", "", "", 0, 0, Category::kTorch};

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// 100 requests of 10 ms on thread 0, request 50 of 60 ms; around them, heavier repeated ranges
// that are not the program's own: torch's "aten::copy_" at the top level (100 x 20 ms) and a
// compile worker's kernel compiles on thread 1 (100 x 50 ms, more than the trace's span in all).
void requests_among_heavier_framework_ranges(Trace& t) {
  std::int64_t at = 0;
  for (int i = 0; i < 100; ++i) {
    const std::int64_t length = (i == 50 ? 60 : 10) * kMs;
    t.range(kRequest, at, at + length);
    t.range(kAtenCopy, at + length + kMs, at + length + 21 * kMs);
    t.range(kPhase, at, at + 50 * kMs, 1);
    at += length + 22 * kMs;
  }
  t.threads[1].name = "ThreadPoolExecutor-0_0";
}

TEST_CASE("the default target is the program's own request, not a heavier framework range") {
  Trace t;
  requests_among_heavier_framework_ranges(t);
  const analysis::JitterResult& r = t.run().jitter;
  CHECK(r.latency_name == "request");
  REQUIRE(r.outliers.size() == 1);
  CHECK(r.outliers[0].duration_ns == 60 * kMs);
  // Why, and what was passed over: the heaviest repeated range, the compiler's.
  CHECK(has(r.latency_reason, "the heaviest range of the program's own (category app)"));
  CHECK(has(r.latency_reason, "not \"compile phase: compile_file\" (category compile)"));
  CHECK(has(r.latency_reason, "--latency NAME"));
}

TEST_CASE("--latency still explains a framework range when asked") {
  Trace t;
  requests_among_heavier_framework_ranges(t);
  analysis::ReportOptions options;
  options.latency_name = "compile phase: compile_file";
  const analysis::JitterResult& r = t.run(options).jitter;
  CHECK(r.latency_name == "compile phase: compile_file");
  CHECK(r.latency_reason == "chosen with --latency");
}

TEST_CASE("only framework ranges repeat: no default target, and the report says how to pick") {
  Trace t;
  for (int i = 0; i < 100; ++i) t.range(kAtenCopy, i * 30 * kMs, i * 30 * kMs + 20 * kMs);
  const analysis::JitterResult& r = t.run().jitter;
  CHECK(r.latency_name.empty());
  CHECK(r.outliers.empty());
  CHECK(has(r.latency_reason, "no range of the program's own"));
  CHECK(has(r.latency_reason, "\"aten::copy_\", category torch"));
  CHECK(has(r.latency_reason, "--latency NAME picks one"));
}

TEST_CASE("a range nested in a repeated range is not the target; a run-wide wrapper is no parent") {
  for (const bool children_first : {false, true}) {
    CAPTURE(children_first);
    // One "serve" range around the run (a wrapper: it does not repeat), 40 batches in it, each
    // holding 3 requests; one "request" on a thread of its own is at its top level, but most are
    // nested: the batches are the top-level range.
    Trace t;
    std::int64_t at = 0;
    if (!children_first) t.range(kServe, 0, 40 * 40 * kMs);
    for (int b = 0; b < 40; ++b) {
      if (!children_first) t.range(kBatch, at, at + 35 * kMs);
      for (int i = 0; i < 3; ++i)
        t.range(kRequest, at + i * 11 * kMs, at + i * 11 * kMs + 10 * kMs);
      if (children_first) t.range(kBatch, at, at + 35 * kMs);
      at += 40 * kMs;
    }
    if (children_first) t.range(kServe, 0, 40 * 40 * kMs);
    t.range(kRequest, 0, 10 * kMs, 1);
    const analysis::ReportResult& r = t.run();
    CHECK(r.jitter.latency_name == "batch");
    const analysis::NameStats* request = t.report->result().names.ranges.back();
    for (const analysis::NameStats* s : r.names.ranges) {
      if (s->name == "request") request = s;
    }
    CHECK(request->count == 121);
    CHECK(request->top_level == 1);
  }
}

TEST_CASE("the program's own ranges on a compile worker's thread are not the target") {
  // Thread 1 runs kernel compiles outside any compile of its own (a worker of torch's compile
  // pool) and a python range around each; thread 0 serves 30 requests.
  Trace t;
  for (int i = 0; i < 100; ++i) {
    t.range(kServe, i * 30 * kMs, i * 30 * kMs + 25 * kMs, 1);
    t.range(kPhase, i * 30 * kMs + 100, i * 30 * kMs + 100 + 20 * kMs, 1);
  }
  for (int i = 0; i < 30; ++i) t.range(kRequest, i * 12 * kMs, i * 12 * kMs + 10 * kMs);
  t.threads[1].name = "worker";
  CHECK(t.run().jitter.latency_name == "request");
}

// A program traced by `gpuprobe run` with no range of its own: 200 forwards of its model (module
// ranges, category torch, each with its outermost child), one of them 5x slower; heavier
// repeated torch ranges that are no module's (an operator, data loading) around them.
void forwards_only(Trace& t) {
  std::int64_t at = 0;
  for (int i = 0; i < 200; ++i) {
    const std::int64_t length = (i == 100 ? 5 : 1) * kMs;
    t.range(kModel, at, at + length);
    t.range(kBlock, at + 10, at + length - 10);
    t.range(kAtenCopy, at + length + 100, at + length + 100 + 3 * kMs);
    t.range(kDataNext, at + length + 4 * kMs, at + length + 8 * kMs);
    at += length + 9 * kMs;
  }
}

TEST_CASE("with no range of the program's own, the target is the model's outermost forward") {
  Trace t;
  forwards_only(t);
  const analysis::JitterResult& r = t.run().jitter;
  CHECK(r.latency_name == "GPT2LMHeadModel");
  CHECK(has(r.latency_reason, "the heaviest module forward (category torch)"));
  REQUIRE(r.outliers.size() == 1);
  CHECK(r.outliers[0].duration_ns == 5 * kMs);
}

TEST_CASE("a program's own repeated range is still preferred to its module forwards") {
  Trace t;
  forwards_only(t);
  for (int i = 0; i < 30; ++i) t.range(kRequest, i * 12 * kMs, i * 12 * kMs + 10 * kMs, 1);
  CHECK(t.run().jitter.latency_name == "request");
}

TEST_CASE("module range names are dotted identifiers; operators and phrases are not") {
  using analysis::Jitter;
  for (const char* yes : {"ResNet", "GPT2LMHeadModel.transformer.h.0", "Sequential.12", "a.b_1.c"})
    CHECK(Jitter::module_range_name(yes));
  for (const char* no : {"", "aten::mm", "dataloader next", "ProfilerStep#3", ".a", "a.", "a..b",
                         "1abc", "3.x", "x.1a", "## forward ##"})
    CHECK_FALSE(Jitter::module_range_name(no));
}

}  // namespace
}  // namespace gpuprobe::test
