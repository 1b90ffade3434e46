// Matches the collectives of several ranks' PyTorch flight recorder dumps
// (formats/torch_flight_recorder.h) by process group and sequence id, and finds the first that
// not every rank joined alike: a rank that never issued collective N (it hangs elsewhere, or
// skipped it) or ranks that issued different collectives as the same N (a desync). Each group's
// point-to-point operations are matched by sender and receiver (analysis/p2p_match.h); the first
// mismatch is the earliest issued of either kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/collective_side.h"
#include "analysis/p2p_match.h"
#include "formats/torch_flight_recorder.h"

namespace gpuprobe::analysis {

struct GroupMatch {
  std::string pg_name, pg_desc;
  std::vector<int> members;       // the group's ranks (global)
  bool members_inferred = false;  // pg_config did not list them: the ranks seen in the dumps
  std::vector<int> without_dump;  // members with no dump in the directory: not judged
  std::int64_t first_seq = -1, last_seq = -1;  // the collectives every buffer still holds
  std::int64_t matched = 0;  // of those, joined alike by every member, from first_seq
  P2pMatch p2p;              // point-to-point operations, matched by sender and receiver
  // The first collective not joined alike, when `mismatch`.
  bool mismatch = false;
  bool desync = false;  // the ranks issued different operations as one sequence id
  std::int64_t seq = -1;
  std::vector<CollectiveSide> joined;           // ranks that issued it (their own record)
  std::vector<int> missing;                     // members that never issued it
  std::vector<CollectiveSide> last_of_missing;  // each missing rank's last operation, any group
  std::int64_t created_ns = 0;                  // the earliest a rank issued it
};

struct CollectiveMatch {
  std::vector<int> ranks;  // the ranks with a dump
  std::string version;     // the dumps' format version (the first rank's)
  std::string
      backend;  // the first entry's communication library: "nccl", "gloo" (its name's prefix)
  std::vector<GroupMatch> groups;
  int first_mismatch = -1;    // index into groups of the earliest mismatch, or -1
  bool first_is_p2p = false;  // that group's point-to-point mismatch, not its collective one
  std::int64_t first_created_ns = 0;  // when the first rank issued the first mismatch
};

CollectiveMatch match_collectives(const std::vector<formats::torch_fr::Dump>& dumps);

// The result as JSON (docs/report.md: gpuprobe.collectives/1).
std::string collective_match_json(const CollectiveMatch& m);

}  // namespace gpuprobe::analysis
