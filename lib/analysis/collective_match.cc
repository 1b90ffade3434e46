#include "analysis/collective_match.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace gpuprobe::analysis {
namespace {

namespace fr = formats::torch_fr;

bool same_collective(const fr::Entry& a, const fr::Entry& b) {
  return a.profiling_name == b.profiling_name && a.input_sizes == b.input_sizes &&
         a.input_dtypes == b.input_dtypes;
}

// The group's ranks as any dump's pg_config lists them; else the default group's are every
// rank's, and another group's those whose dumps mention it.
std::vector<int> members_of(const std::vector<fr::Dump>& dumps, const std::string& pg_name,
                            const std::string& pg_desc, bool* inferred) {
  for (const fr::Dump& d : dumps)
    for (const fr::ProcessGroup& g : d.groups)
      if (g.name == pg_name && !g.ranks.empty()) {
        *inferred = false;
        return g.ranks;
      }
  *inferred = true;
  std::vector<int> out;
  for (const fr::Dump& d : dumps) {
    const bool member = pg_desc == "default_pg" ||
                        std::any_of(d.entries.begin(), d.entries.end(),
                                    [&](const fr::Entry& e) { return e.pg_name == pg_name; });
    if (member) out.push_back(d.rank);
  }
  return out;
}

GroupMatch match_group(const std::vector<fr::Dump>& dumps, const std::string& pg_name,
                       const std::string& pg_desc) {
  GroupMatch g;
  g.pg_name = pg_name;
  g.pg_desc = pg_desc;
  g.members = members_of(dumps, pg_name, pg_desc, &g.members_inferred);
  // Per judged rank, its collectives of this group by sequence id (the first of an id).
  std::map<int, std::map<std::int64_t, const fr::Entry*>> by_rank;
  std::map<int, const fr::Dump*> dump_of;
  for (const fr::Dump& d : dumps) dump_of[d.rank] = &d;
  for (int r : g.members) {
    auto it = dump_of.find(r);
    if (it == dump_of.end()) {
      g.without_dump.push_back(r);
      continue;
    }
    auto& seqs = by_rank[r];
    for (const fr::Entry& e : it->second->entries) {
      if (e.pg_name != pg_name) continue;
      if (!is_point_to_point(e) && e.collective_seq_id >= 0) {
        seqs.emplace(e.collective_seq_id, &e);
      }
    }
  }
  // Compare from the first id every rank's buffer still holds (older ones may be overwritten).
  std::set<std::int64_t> ids;
  for (const auto& [r, seqs] : by_rank) {
    if (seqs.empty()) continue;
    g.first_seq = std::max(g.first_seq, seqs.begin()->first);
    g.last_seq = std::max(g.last_seq, seqs.rbegin()->first);
    for (const auto& [s, e] : seqs) ids.insert(s);
  }
  for (std::int64_t s : ids) {
    if (s < g.first_seq) continue;
    const fr::Entry* first = nullptr;
    for (const auto& [r, seqs] : by_rank) {
      auto it = seqs.find(s);
      if (it == seqs.end()) {
        g.missing.push_back(r);
        continue;
      }
      g.joined.push_back(side_of(r, *it->second));
      if (first == nullptr) first = it->second;
      g.desync = g.desync || !same_collective(*first, *it->second);
    }
    if (g.missing.empty() && !g.desync) {
      ++g.matched;
      g.joined.clear();
      continue;
    }
    g.mismatch = true;
    g.seq = s;
    g.created_ns = INT64_MAX;
    for (const CollectiveSide& j : g.joined) g.created_ns = std::min(g.created_ns, j.created_ns);
    for (int r : g.missing) g.last_of_missing.push_back(last_operation(*dump_of[r]));
    break;
  }
  g.p2p = match_p2p(dump_of, g.members, pg_name);
  return g;
}

nlohmann::json side_json(const CollectiveSide& s) {
  return {{"rank", s.rank},
          {"process_group", s.pg_name},
          {"seq", s.seq},
          {"name", s.name},
          {"input_sizes", s.input_sizes},
          {"input_dtypes", s.input_dtypes},
          {"state", s.state},
          {"created_ns", s.created_ns},
          {"started_ns", s.started_ns},
          {"completed_ns", s.completed_ns},
          {"where", s.where},
          {"p2p", s.p2p}};
}

}  // namespace

CollectiveMatch match_collectives(const std::vector<fr::Dump>& dumps) {
  CollectiveMatch m;
  std::vector<std::pair<std::string, std::string>> groups;  // (name, desc), first seen first
  for (const fr::Dump& d : dumps) {
    m.ranks.push_back(d.rank);
    if (m.version.empty()) m.version = d.version;
    if (m.backend.empty() && !d.entries.empty()) {
      const std::string& name = d.entries.front().profiling_name;
      m.backend = name.substr(0, std::min(name.find(':'), name.size()));
    }
    for (const fr::Entry& e : d.entries)
      if (std::none_of(groups.begin(), groups.end(),
                       [&](const auto& g) { return g.first == e.pg_name; }))
        groups.emplace_back(e.pg_name, e.pg_desc);
  }
  // By name, numerically where the names are numbers (PyTorch numbers its groups "0", "1", ...).
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
  });
  for (const auto& [name, desc] : groups) {
    m.groups.push_back(match_group(dumps, name, desc));
    const GroupMatch& g = m.groups.back();
    for (const bool p2p : {false, true}) {
      if (!(p2p ? g.p2p.mismatch : g.mismatch)) continue;
      const std::int64_t created = p2p ? g.p2p.created_ns : g.created_ns;
      if (m.first_mismatch >= 0 && created >= m.first_created_ns) continue;
      m.first_mismatch = static_cast<int>(m.groups.size() - 1);
      m.first_is_p2p = p2p;
      m.first_created_ns = created;
    }
  }
  return m;
}

std::string collective_match_json(const CollectiveMatch& m) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupMatch& g : m.groups) {
    nlohmann::json j = {{"process_group", g.pg_name},
                        {"desc", g.pg_desc},
                        {"members", g.members},
                        {"members_inferred", g.members_inferred},
                        {"without_dump", g.without_dump},
                        {"first_seq", g.first_seq},
                        {"last_seq", g.last_seq},
                        {"matched", g.matched},
                        {"p2p", g.p2p.total},
                        {"p2p_matched", g.p2p.matched},
                        {"p2p_not_matched", g.p2p.not_matched},
                        {"p2p_not_matched_why", g.p2p.not_matched_why},
                        {"mismatch", nullptr},
                        {"p2p_mismatch", nullptr}};
    if (g.mismatch) {
      nlohmann::json joined = nlohmann::json::array(), last = nlohmann::json::array();
      for (const CollectiveSide& s : g.joined) joined.push_back(side_json(s));
      for (const CollectiveSide& s : g.last_of_missing) last.push_back(side_json(s));
      j["mismatch"] = {{"seq", g.seq},
                       {"kind", g.desync ? "desync" : "missing"},
                       {"joined", joined},
                       {"missing", g.missing},
                       {"last_of_missing", last},
                       {"created_ns", g.created_ns}};
    }
    if (g.p2p.mismatch) {
      nlohmann::json sides = nlohmann::json::array();
      for (const CollectiveSide& s : g.p2p.sides) sides.push_back(side_json(s));
      j["p2p_mismatch"] = {
          {"kind", g.p2p.kind},
          {"src", g.p2p.src},
          {"dst", g.p2p.dst},
          {"index", g.p2p.index},
          {"sides", sides},
          {"last_of_missing",
           g.p2p.kind == "desync" ? nlohmann::json(nullptr) : side_json(g.p2p.last_of_missing)},
          {"created_ns", g.p2p.created_ns}};
    }
    groups.push_back(std::move(j));
  }
  nlohmann::json out = {{"schema", "gpuprobe.collectives/1"},
                        {"ranks", m.ranks},
                        {"version", m.version},
                        {"backend", m.backend},
                        {"groups", groups},
                        {"first_mismatch", m.first_mismatch},
                        {"first_mismatch_kind", m.first_mismatch < 0 ? nlohmann::json(nullptr)
                                                : m.first_is_p2p     ? "p2p"
                                                                     : "collective"},
                        {"first_created_ns", m.first_created_ns}};
  return out.dump();
}

}  // namespace gpuprobe::analysis
