// Ranks side by side: the straggler is the rank whose step, or whose work outside collectives,
// exceeds the others' median by the ratio.
#include "analysis/ranks.h"

#include <nlohmann/json.hpp>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

constexpr CallSite kAllReduce{"nccl:all_reduce", "", "", 0, 0, Category::kApp};

// `steps` steps of 10 ms, each `work_ms` of work then an all-reduce that waits for the rest.
void rank_trace(Trace& t, int steps, double work_ms) {
  for (int i = 0; i < steps; ++i) {
    const std::int64_t at = i * 10 * kMs;
    const auto work = static_cast<std::int64_t>(work_ms * kMs);
    t.range(kStep, at, at + 10 * kMs);
    t.range(kAllReduce, at + work, at + 10 * kMs);
  }
}

TEST_CASE("the rank that works longest while the others wait in collectives is the straggler") {
  Trace a, b, c;
  rank_trace(a, 5, 4);
  rank_trace(b, 5, 9);  // the others wait 6 ms in every all-reduce for this one
  rank_trace(c, 5, 4.2);
  TraceInfo info_a, info_b, info_c;
  info_a.rank = 0;
  info_b.rank = 1;
  info_c.rank = 2;
  const std::vector<analysis::RankInput> ranks = {{"a.json", &a.run({}, info_a)},
                                                  {"b.json", &b.run({}, info_b)},
                                                  {"c.json", &c.run({}, info_c)}};
  const std::vector<analysis::RankRow> rows = analysis::rank_rows(ranks, 1.1);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].rank == 0);
  CHECK(rows[0].steps == 5);
  CHECK(rows[0].step_ms == Approx(10));
  CHECK(rows[0].collective_ms == Approx(6));
  CHECK(rows[0].work_ms == Approx(4));
  CHECK_FALSE(rows[0].straggler);
  CHECK(rows[1].straggler);
  CHECK(rows[1].work_ms == Approx(9));
  CHECK(rows[1].why.find("outside collectives") != std::string::npos);
  CHECK_FALSE(rows[2].straggler);
  const nlohmann::json j = nlohmann::json::parse(analysis::ranks_json(rows));
  CHECK(j["schema"] == "gpuprobe.ranks/1");
  CHECK(j["ranks"][1]["straggler"] == true);
}

constexpr CallSite kForwardBackward{"forward+backward", "", "", 0, 0, Category::kApp};

// As rank_trace, the work a range of `work_ms` holding a kernel of `kernel_ms`.
void rank_trace_with_work(Trace& t, int steps, double work_ms, double kernel_ms) {
  rank_trace(t, steps, work_ms);
  for (int i = 0; i < steps; ++i) {
    const std::int64_t at = i * 10 * kMs;
    t.range(kForwardBackward, at, at + static_cast<std::int64_t>(work_ms * kMs));
    t.activity(GpuActivityKind::kKernel, "gemm", at,
               at + static_cast<std::int64_t>(kernel_ms * kMs));
  }
}

TEST_CASE("a straggler's excess: what exceeds the other ranks' median per step by the most") {
  Trace a, b, c;
  rank_trace_with_work(a, 4, 4, 2);
  rank_trace_with_work(b, 4, 9, 6);  // the range's self time 5 ms more, the kernel's 4 ms
  rank_trace_with_work(c, 4, 4.2, 2);
  TraceInfo info;
  const std::vector<analysis::RankInput> ranks = {
      {"a.json", &a.run({}, info)}, {"b.json", &b.run({}, info)}, {"c.json", &c.run({}, info)}};
  const std::vector<analysis::RankRow> rows = analysis::rank_rows(ranks, 1.1);
  REQUIRE(rows[1].straggler);
  CHECK(rows[1].excess_kind == "range");
  CHECK(rows[1].excess_name == "forward+backward");
  CHECK(rows[1].excess_ms == Approx(9));
  CHECK(rows[1].others_ms == Approx(4));  // the lower middle of 4 and 4.2
  CHECK(rows[1].why.find("; most of it: range forward+backward, 9.000 ms per step against "
                         "4.000 ms") != std::string::npos);
  CHECK(rows[0].excess_name.empty());
  const nlohmann::json j = nlohmann::json::parse(analysis::ranks_json(rows));
  CHECK(j["ranks"][1]["excess"]["name"] == "forward+backward");
  CHECK(j["ranks"][0]["excess"].is_null());
}

TEST_CASE("one rank has nobody to be compared with") {
  Trace a;
  rank_trace(a, 3, 5);
  const std::vector<analysis::RankRow> rows = analysis::rank_rows({{"a.json", &a.run()}}, 1.1);
  REQUIRE(rows.size() == 1);
  CHECK_FALSE(rows[0].straggler);
}

}  // namespace
}  // namespace gpuprobe::test
