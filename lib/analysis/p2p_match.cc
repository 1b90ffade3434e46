#include "analysis/p2p_match.h"

#include <algorithm>
#include <climits>
#include <set>
#include <utility>

namespace gpuprobe::analysis {
namespace {

namespace fr = formats::torch_fr;

// "nccl:send 0->1" or "nccl:recv 1<-0": the operation and its two group ranks; a receive from
// any source ("recv 1<-?") has peer -1.
struct PeerOp {
  bool send = false;
  int self = -1, peer = -1;
};

bool parse_rank(const std::string& s, int* out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *out = std::stoi(s);
  return true;
}

bool parse_peer_op(const std::string& profiling_name, PeerOp* op) {
  const std::size_t colon = profiling_name.rfind(':');
  const std::string name = profiling_name.substr(colon == std::string::npos ? 0 : colon + 1);
  const std::size_t space = name.find(' ');
  if (space == std::string::npos) return false;
  const std::string verb = name.substr(0, space), peers = name.substr(space + 1);
  op->send = verb == "send";
  if (!op->send && verb != "recv") return false;
  const std::size_t arrow = peers.find(op->send ? "->" : "<-");
  if (arrow == std::string::npos) return false;
  const std::string peer = peers.substr(arrow + 2);
  if (!parse_rank(peers.substr(0, arrow), &op->self)) return false;
  if (!op->send && peer == "?") return true;
  return parse_rank(peer, &op->peer);
}

void leave_out(P2pMatch* m, std::int64_t n, const std::string& why) {
  if (n <= 0) return;
  m->not_matched += n;
  if (m->not_matched_why.empty()) m->not_matched_why = why;
}

// The send meets the receive: what was sent is what the receive takes.
bool alike(const fr::Entry& send, const fr::Entry& recv) {
  return send.input_sizes == recv.output_sizes &&
         (send.input_dtypes.empty() || recv.output_dtypes.empty() ||
          send.input_dtypes == recv.output_dtypes);
}

}  // namespace

bool is_point_to_point(const fr::Entry& e) {
  PeerOp op;
  return e.is_p2p || parse_peer_op(e.profiling_name, &op);
}

P2pMatch match_p2p(const std::map<int, const fr::Dump*>& dumps, const std::vector<int>& members,
                   const std::string& pg_name) {
  P2pMatch m;
  std::vector<int> ranks = members;  // the group's rank i is the i-th of its global ranks
  std::sort(ranks.begin(), ranks.end());
  const auto global = [&](int local) {
    return local >= 0 && static_cast<std::size_t>(local) < ranks.size() ? ranks[local] : -1;
  };
  // Per (sender, receiver): the sender's sends and the receiver's receives, oldest first.
  std::map<std::pair<int, int>,
           std::pair<std::vector<const fr::Entry*>, std::vector<const fr::Entry*>>>
      pairs;
  std::set<int> wrapped;
  for (int r : members) {
    auto it = dumps.find(r);
    if (it == dumps.end()) continue;
    const fr::Dump& d = *it->second;
    if (!d.entries.empty() && d.entries.front().record_id > 0) wrapped.insert(r);
    for (const fr::Entry& e : d.entries) {
      if (e.pg_name != pg_name || !is_point_to_point(e)) continue;
      ++m.total;
      PeerOp op;
      if (!parse_peer_op(e.profiling_name, &op) || global(op.self) != r) {
        leave_out(&m, 1, "\"" + e.profiling_name + "\" names no peers of this rank");
      } else if (op.peer < 0) {
        leave_out(&m, 1, "a receive from any source names no peer");
      } else if (global(op.peer) < 0) {
        leave_out(&m, 1, "\"" + e.profiling_name + "\" names a rank outside the group");
      } else if (op.send) {
        pairs[{r, global(op.peer)}].first.push_back(&e);
      } else {
        pairs[{global(op.peer), r}].second.push_back(&e);
      }
    }
  }
  m.created_ns = INT64_MAX;
  for (const auto& [pair, ops] : pairs) {
    const auto& [sends, recvs] = ops;
    const auto [src, dst] = pair;
    const std::int64_t n = static_cast<std::int64_t>(sends.size() + recvs.size());
    if (dumps.count(src) == 0 || dumps.count(dst) == 0) {
      leave_out(&m, n, "no dump from rank " + std::to_string(dumps.count(src) == 0 ? src : dst));
      continue;
    }
    if (wrapped.count(src) != 0 || wrapped.count(dst) != 0) {
      leave_out(&m, n,
                "rank " + std::to_string(wrapped.count(src) != 0 ? src : dst) +
                    "'s ring overwrote its oldest entries");
      continue;
    }
    for (std::size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
      const fr::Entry* send = k < sends.size() ? sends[k] : nullptr;
      const fr::Entry* recv = k < recvs.size() ? recvs[k] : nullptr;
      if (send != nullptr && recv != nullptr && alike(*send, *recv)) {
        ++m.matched;
        continue;
      }
      std::int64_t created = INT64_MAX;
      if (send != nullptr) created = send->time_created_ns;
      if (recv != nullptr) created = std::min(created, recv->time_created_ns);
      if (created < m.created_ns) {  // the earliest mismatch of any pair
        m.mismatch = true;
        m.kind = send == nullptr ? "unsent" : recv == nullptr ? "unreceived" : "desync";
        m.src = src;
        m.dst = dst;
        m.index = static_cast<std::int64_t>(k);
        m.created_ns = created;
        m.sides.clear();
        if (send != nullptr) m.sides.push_back(side_of(src, *send, true));
        if (recv != nullptr) m.sides.push_back(side_of(dst, *recv, true));
        m.last_of_missing = {};
        if (send == nullptr || recv == nullptr)
          m.last_of_missing = last_operation(*dumps.at(send == nullptr ? src : dst));
      }
      break;
    }
  }
  if (!m.mismatch) m.created_ns = 0;
  return m;
}

}  // namespace gpuprobe::analysis
