#include "analysis/collective_match.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace gpuprobe::analysis {
namespace {

namespace fr = formats::torch_fr;

// The innermost frame of the program's own code: the first outside torch's files (and outside
// Python's "<string>"-like pseudo files), as "file.py:42 in step".
std::string where_of(const fr::Entry& e) {
  for (const fr::Frame& f : e.frames) {
    if (f.file.find("/torch/") != std::string::npos || f.file.empty() || f.file[0] == '<') continue;
    const std::size_t slash = f.file.rfind('/');
    return f.file.substr(slash == std::string::npos ? 0 : slash + 1) + ":" +
           std::to_string(f.line) + " in " + f.name;
  }
  return {};
}

CollectiveSide side_of(int rank, const fr::Entry& e) {
  return {rank,           e.pg_name, e.collective_seq_id, e.profiling_name,  e.input_sizes,
          e.input_dtypes, e.state,   e.time_created_ns,   e.time_started_ns, e.time_completed_ns,
          where_of(e)};
}

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
      if (e.is_p2p) {
        ++g.p2p;
      } else if (e.collective_seq_id >= 0) {
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
    for (int r : g.missing) {
      const fr::Dump& d = *dump_of[r];
      const fr::Entry* last = nullptr;
      for (const fr::Entry& e : d.entries)
        if (last == nullptr || e.time_created_ns >= last->time_created_ns) last = &e;
      CollectiveSide none;
      none.rank = r;
      g.last_of_missing.push_back(last != nullptr ? side_of(r, *last) : none);
    }
    break;
  }
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
          {"where", s.where}};
}

}  // namespace

CollectiveMatch match_collectives(const std::vector<fr::Dump>& dumps) {
  CollectiveMatch m;
  std::vector<std::pair<std::string, std::string>> groups;  // (name, desc), first seen first
  for (const fr::Dump& d : dumps) {
    m.ranks.push_back(d.rank);
    if (m.version.empty()) m.version = d.version;
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
    if (g.mismatch &&
        (m.first_mismatch < 0 ||
         g.created_ns < m.groups[static_cast<std::size_t>(m.first_mismatch)].created_ns))
      m.first_mismatch = static_cast<int>(m.groups.size() - 1);
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
                        {"p2p", g.p2p},
                        {"mismatch", nullptr}};
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
    groups.push_back(std::move(j));
  }
  nlohmann::json out = {{"schema", "gpuprobe.collectives/1"},
                        {"ranks", m.ranks},
                        {"version", m.version},
                        {"groups", groups},
                        {"first_mismatch", m.first_mismatch}};
  return out.dump();
}

}  // namespace gpuprobe::analysis
