// Matching ranks' flight recorder entries: the first collective a rank never joined, ranks that
// issued different collectives under one sequence id, buffers that overwrote their oldest
// entries, and groups whose members have no dump.
#include "analysis/collective_match.h"

#include <nlohmann/json.hpp>

#include "support/catch.hpp"

namespace gpuprobe::test {
namespace {

namespace fr = formats::torch_fr;

fr::Entry collective(const std::string& pg, std::int64_t seq, std::int64_t created_ns,
                     const std::string& name = "nccl:all_reduce") {
  fr::Entry e;
  e.pg_name = pg;
  e.pg_desc = pg == "0" ? "default_pg" : "tp";
  e.collective_seq_id = seq;
  e.profiling_name = name;
  e.input_sizes = "[[1024]]";
  e.input_dtypes = "[Float]";
  e.state = "completed";
  e.time_created_ns = created_ns;
  e.frames = {{"all_reduce", "/x/site-packages/torch/distributed/distributed_c10d.py", 10},
              {"train_step", "/home/u/train.py", 42}};
  return e;
}

// Collectives 1..n of group "0", one every ms.
fr::Dump dump(int rank, std::int64_t n) {
  fr::Dump d;
  d.rank = rank;
  d.file = "fr_rank_" + std::to_string(rank);
  d.version = "2.10";
  for (std::int64_t s = 1; s <= n; ++s) d.entries.push_back(collective("0", s, s * 1000000));
  return d;
}

TEST_CASE("the first collective a rank never issued, and where that rank stopped") {
  std::vector<fr::Dump> dumps = {dump(0, 5), dump(1, 3), dump(2, 5)};
  dumps[0].entries.back().state = "started";
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  REQUIRE(m.groups.size() == 1);
  REQUIRE(m.first_mismatch == 0);
  const analysis::GroupMatch& g = m.groups[0];
  CHECK(g.members == std::vector<int>{0, 1, 2});
  CHECK(g.members_inferred);  // no pg_config: the default group holds every rank
  CHECK(g.matched == 3);
  CHECK(g.seq == 4);
  CHECK_FALSE(g.desync);
  CHECK(g.missing == std::vector<int>{1});
  REQUIRE(g.joined.size() == 2);
  CHECK(g.joined[0].rank == 0);
  CHECK(g.joined[0].where == "train.py:42 in train_step");
  CHECK(g.created_ns == 4000000);
  REQUIRE(g.last_of_missing.size() == 1);
  CHECK(g.last_of_missing[0].seq == 3);
  const nlohmann::json j = nlohmann::json::parse(analysis::collective_match_json(m));
  CHECK(j["schema"] == "gpuprobe.collectives/1");
  CHECK(j["groups"][0]["mismatch"]["kind"] == "missing");
  CHECK(j["groups"][0]["mismatch"]["missing"] == nlohmann::json::array({1}));
}

TEST_CASE("ranks that issued different collectives as one sequence id are a desync") {
  std::vector<fr::Dump> dumps = {dump(0, 4), dump(1, 4)};
  dumps[1].entries[2].profiling_name = "nccl:broadcast";
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  REQUIRE(m.first_mismatch == 0);
  CHECK(m.groups[0].desync);
  CHECK(m.groups[0].seq == 3);
  CHECK(m.groups[0].missing.empty());
  CHECK(m.groups[0].matched == 2);
}

TEST_CASE("only what every buffer still holds is compared; a rank stuck in another group") {
  std::vector<fr::Dump> dumps = {dump(0, 10), dump(1, 10)};
  // Rank 1's ring kept only collectives 6..10; then both joined group "1", rank 0 went on to
  // group 0's 11th, which rank 1 never issued: it waits in group 1's second collective.
  dumps[1].entries.erase(dumps[1].entries.begin(), dumps[1].entries.begin() + 5);
  for (fr::Dump& d : dumps) {
    d.groups = {{"1", "tp", {0, 1}}};
    d.entries.push_back(collective("1", 1, 20000000, "nccl:all_gather"));
  }
  dumps[0].entries.push_back(collective("0", 11, 21000000));
  dumps[1].entries.push_back(collective("1", 2, 22000000, "nccl:all_gather"));
  dumps[1].entries.back().state = "started";
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  REQUIRE(m.groups.size() == 2);
  const analysis::GroupMatch& g0 = m.groups[0];
  CHECK(g0.first_seq == 6);
  CHECK(g0.matched == 5);
  CHECK(g0.seq == 11);
  CHECK(g0.missing == std::vector<int>{1});
  REQUIRE(g0.last_of_missing.size() == 1);
  CHECK(g0.last_of_missing[0].pg_name == "1");
  CHECK(g0.last_of_missing[0].state == "started");
  const analysis::GroupMatch& g1 = m.groups[1];
  CHECK_FALSE(g1.members_inferred);
  CHECK(g1.seq == 2);
  CHECK(g1.missing == std::vector<int>{0});
  // Group 0's mismatch began first (21 ms against 22 ms).
  CHECK(m.first_mismatch == 0);
}

TEST_CASE("members without a dump are named, not judged; p2p is counted, not matched") {
  std::vector<fr::Dump> dumps = {dump(0, 3), dump(1, 3)};
  for (fr::Dump& d : dumps) d.groups = {{"0", "default_pg", {0, 1, 2, 3}}};
  fr::Entry send = collective("0", -1, 5000000, "nccl:send 0->1");
  send.is_p2p = true;
  send.p2p_seq_id = 1;
  dumps[0].entries.push_back(send);
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  REQUIRE(m.groups.size() == 1);
  CHECK(m.first_mismatch == -1);
  CHECK(m.groups[0].without_dump == std::vector<int>{2, 3});
  CHECK(m.groups[0].matched == 3);
  CHECK(m.groups[0].p2p == 1);
}

}  // namespace
}  // namespace gpuprobe::test
