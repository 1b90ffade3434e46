// Point-to-point operations (send and recv) of one process group in several ranks' PyTorch
// flight recorder dumps, matched between each sender and its receiver: the k-th send from rank A
// to rank B meets B's k-th receive from A. The peers come from the profiling names, which NCCL's
// recorder writes as "nccl:send 0->1" and "nccl:recv 1<-0" in the group's own ranks (gloo's
// records no point-to-point operations). Counting from the first needs every send and receive of
// the pair, so a pair whose sender or receiver ring overwrote its oldest entries is left out, as
// is a receive from any source ("recv 1<-?"), which names no peer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/collective_side.h"
#include "formats/torch_flight_recorder.h"

namespace gpuprobe::analysis {

struct P2pMatch {
  std::int64_t total = 0;        // the group's point-to-point entries in the judged dumps
  std::int64_t matched = 0;      // sends met by a receive of the same sizes and dtypes
  std::int64_t not_matched = 0;  // entries left out of the matching
  std::string not_matched_why;   // the first reason an entry was left out
  // The first operation one side issued and the other did not, or issued differently.
  bool mismatch = false;
  std::string kind;                   // "unreceived": no receive met the send; "unsent"; "desync"
  int src = -1, dst = -1;             // the pair, global ranks
  std::int64_t index = -1;            // the pair's operation, from 0
  std::vector<CollectiveSide> sides;  // the send and the receive, those recorded
  CollectiveSide last_of_missing;     // the rank that never issued its side: its last operation
  std::int64_t created_ns = 0;        // when the first side was issued
};

// A send or receive: flagged so (is_p2p), or named so where a dump predates the flag.
bool is_point_to_point(const formats::torch_fr::Entry& e);

// `members`: the group's global ranks; `dumps`: each rank's dump, by global rank (a member
// without one is not judged).
P2pMatch match_p2p(const std::map<int, const formats::torch_fr::Dump*>& dumps,
                   const std::vector<int>& members, const std::string& pg_name);

}  // namespace gpuprobe::analysis
