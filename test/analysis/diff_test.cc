// Two reports compared by name: the largest change first, names only in one side included.
#include "analysis/diff.h"

#include <nlohmann/json.hpp>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("per name, calls and total in A and B, largest change first") {
  Trace a, b;
  a.range(kForward, 0, 10 * kMs);
  a.range(kParse, 10 * kMs, 11 * kMs);
  b.range(kForward, 0, 4 * kMs);
  b.range(kParse, 4 * kMs, 6 * kMs);
  b.range(kParse, 6 * kMs, 8 * kMs);
  b.activity(GpuActivityKind::kKernel, "gemm", 0, 3 * kMs);
  const analysis::ReportResult &ra = a.run(), &rb = b.run();
  const std::vector<analysis::DiffRow> rows = analysis::diff_rows(ra, rb);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "forward");
  CHECK(rows[0].delta_ms() == Approx(-6));
  // The new kernel and parse both changed by 3 ms: ties keep kind, then name, order.
  CHECK(rows[1].kind == "kernel");
  CHECK(rows[1].calls_a == 0);
  CHECK(rows[1].calls_b == 1);
  CHECK(rows[2].kind == "range");
  for (const analysis::DiffRow& r : rows) {
    if (r.name == "parse") {
      CHECK(r.calls_a == 1);
      CHECK(r.calls_b == 2);
      CHECK(r.delta_ms() == Approx(3));
    }
  }
  const nlohmann::json j = nlohmann::json::parse(analysis::diff_json(ra, rb));
  CHECK(j["schema"] == "gpuprobe.diff/1");
  CHECK(j["rows"].size() == 3);
}

}  // namespace
}  // namespace gpuprobe::test
