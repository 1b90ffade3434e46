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

// A send or receive of group `pg` as NCCL's recorder names it, in the group's own ranks.
fr::Entry p2p(const std::string& pg, const std::string& op, std::int64_t p2p_seq,
              std::int64_t created_ns, const std::string& sizes = "[[256]]") {
  fr::Entry e = collective(pg, -1, created_ns, "nccl:" + op);
  e.is_p2p = true;
  e.p2p_seq_id = p2p_seq;
  e.input_sizes = e.output_sizes = sizes;
  return e;
}

TEST_CASE("members without a dump are named, not judged; a send met by its receive") {
  std::vector<fr::Dump> dumps = {dump(0, 3), dump(1, 3)};
  for (fr::Dump& d : dumps) d.groups = {{"0", "default_pg", {0, 1, 2, 3}}};
  dumps[0].entries.push_back(p2p("0", "send 0->1", 1, 5000000));
  dumps[1].entries.push_back(p2p("0", "recv 1<-0", 1, 5100000));
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  REQUIRE(m.groups.size() == 1);
  CHECK(m.first_mismatch == -1);
  CHECK(m.groups[0].without_dump == std::vector<int>{2, 3});
  CHECK(m.groups[0].matched == 3);
  CHECK(m.groups[0].p2p.total == 2);
  CHECK(m.groups[0].p2p.matched == 1);
  CHECK(m.groups[0].p2p.not_matched == 0);
}

TEST_CASE("a send that no receive met, in a group's own ranks, is the first mismatch") {
  // Group "1" holds global ranks 2 and 3: its rank 0 is global 2. The pair 2 -> 3 sent twice
  // and received once; the collectives of group 0 all match.
  std::vector<fr::Dump> dumps = {dump(2, 3), dump(3, 3)};
  for (fr::Dump& d : dumps) d.groups = {{"0", "default_pg", {2, 3}}, {"1", "pp", {3, 2}}};
  dumps[0].entries.push_back(p2p("1", "send 0->1", 1, 5000000));
  dumps[1].entries.push_back(p2p("1", "recv 1<-0", 1, 5200000));
  dumps[0].entries.push_back(p2p("1", "send 0->1", 2, 6000000));
  dumps[1].entries.push_back(collective("0", 4, 5900000, "nccl:broadcast"));  // where 3 went
  dumps[0].entries.push_back(collective("0", 4, 7000000, "nccl:broadcast"));
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  REQUIRE(m.groups.size() == 2);
  CHECK_FALSE(m.groups[0].mismatch);
  const analysis::P2pMatch& p = m.groups[1].p2p;
  CHECK(p.total == 3);
  CHECK(p.matched == 1);
  REQUIRE(p.mismatch);
  CHECK(p.kind == "unreceived");
  CHECK((p.src == 2 && p.dst == 3));
  CHECK(p.index == 1);
  CHECK(p.created_ns == 6000000);
  REQUIRE(p.sides.size() == 1);
  CHECK((p.sides[0].rank == 2 && p.sides[0].seq == 2 && p.sides[0].p2p));
  CHECK(p.sides[0].where == "train.py:42 in train_step");
  CHECK((p.last_of_missing.rank == 3 && p.last_of_missing.name == "nccl:broadcast"));
  CHECK(m.first_mismatch == 1);
  CHECK(m.first_is_p2p);
  CHECK(m.first_created_ns == 6000000);
  const nlohmann::json j = nlohmann::json::parse(analysis::collective_match_json(m));
  CHECK(j["first_mismatch_kind"] == "p2p");
  CHECK(j["groups"][1]["p2p_mismatch"]["kind"] == "unreceived");
  CHECK(j["groups"][1]["p2p_mismatch"]["sides"][0]["p2p"] == true);
  CHECK(j["groups"][1]["p2p_matched"] == 1);
}

TEST_CASE("a receive no send met, a send received as other sizes, and the earliest of kinds") {
  std::vector<fr::Dump> dumps = {dump(0, 5), dump(1, 5)};
  for (fr::Dump& d : dumps) d.groups = {{"0", "default_pg", {0, 1}}};
  // 1 -> 0: rank 0 waits for a message rank 1 never sent (issued at 1.5 ms).
  dumps[0].entries.push_back(p2p("0", "recv 0<-1", 1, 1500000));
  SECTION("unsent") {
    const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
    const analysis::P2pMatch& p = m.groups[0].p2p;
    REQUIRE(p.mismatch);
    CHECK(p.kind == "unsent");
    CHECK((p.src == 1 && p.dst == 0 && p.index == 0));
    CHECK(p.last_of_missing.rank == 1);
    CHECK(m.first_is_p2p);
  }
  SECTION("desync") {
    dumps[1].entries.push_back(p2p("0", "send 1->0", 1, 1400000, "[[128]]"));
    const analysis::P2pMatch p = analysis::match_collectives(dumps).groups[0].p2p;
    REQUIRE(p.mismatch);
    CHECK(p.kind == "desync");
    CHECK(p.sides.size() == 2);
    CHECK(p.created_ns == 1400000);
  }
  SECTION("a collective mismatch issued earlier comes first") {
    dumps[1].entries[0].profiling_name = "nccl:broadcast";  // collective 1 a desync, at 1 ms
    const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
    CHECK(m.groups[0].p2p.mismatch);
    CHECK(m.groups[0].mismatch);
    CHECK(m.first_mismatch == 0);
    CHECK_FALSE(m.first_is_p2p);
    CHECK(m.first_created_ns == 1000000);
  }
}

TEST_CASE("pairs that cannot be counted from the start are left out, with why") {
  std::vector<fr::Dump> dumps = {dump(0, 3), dump(1, 3)};
  for (fr::Dump& d : dumps) d.groups = {{"0", "default_pg", {0, 1}}};
  dumps[1].entries.push_back(p2p("0", "recv 1<-?", 1, 5000000));  // any source
  CHECK(analysis::match_collectives(dumps).groups[0].p2p.not_matched_why ==
        "a receive from any source names no peer");
  // Rank 0's ring overwrote its oldest entries: a send it made may be gone.
  for (std::size_t i = 0; i < dumps[0].entries.size(); ++i) dumps[0].entries[i].record_id = 7 + i;
  dumps[0].entries.push_back(p2p("0", "send 0->1", 3, 6000000));
  const analysis::P2pMatch p = analysis::match_collectives(dumps).groups[0].p2p;
  CHECK_FALSE(p.mismatch);
  CHECK(p.total == 2);
  CHECK(p.not_matched == 2);
}

TEST_CASE("point-to-point names without peers of the rank are left out, never misread") {
  std::vector<fr::Dump> dumps = {dump(0, 1), dump(1, 1)};
  for (fr::Dump& d : dumps) d.groups = {{"0", "default_pg", {0, 1}}};
  for (const char* name : {"send", "send 0->", "send x->1", "send 0->1->2", "recv 0<-99999999999",
                           "send 1->0", "send 0->5", "recv 0-<1", "send -1->1"}) {
    dumps[0].entries.push_back(p2p("0", name, 1, 5000000));
  }
  const analysis::P2pMatch p = analysis::match_collectives(dumps).groups[0].p2p;
  CHECK(p.total == 9);
  CHECK(p.not_matched == 9);
  CHECK_FALSE(p.mismatch);
  fr::Entry plain = collective("0", 1, 1);
  CHECK_FALSE(analysis::is_point_to_point(plain));
  plain.profiling_name = "nccl:recv 1<-0";  // a dump from before the is_p2p flag
  CHECK(analysis::is_point_to_point(plain));
}

}  // namespace
}  // namespace gpuprobe::test
