// Matches the collectives of several ranks' PyTorch flight recorder dumps
// (formats/torch_flight_recorder.h) by process group and sequence id, and finds the first that
// not every rank joined alike: a rank that never issued collective N (it hangs elsewhere, or
// skipped it) or ranks that issued different collectives as the same N (a desync).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/torch_flight_recorder.h"

namespace gpuprobe::analysis {

// One rank's side of a collective, or a missing rank's last operation.
struct CollectiveSide {
  int rank = -1;
  std::string pg_name;  // the process group of `last` entries, which may be another group
  std::int64_t seq = -1;
  std::string name, input_sizes, input_dtypes, state;
  std::int64_t created_ns = 0, started_ns = 0, completed_ns = 0;
  std::string where;  // the innermost frame outside torch: "train.py:42 in step"
};

struct GroupMatch {
  std::string pg_name, pg_desc;
  std::vector<int> members;       // the group's ranks (global)
  bool members_inferred = false;  // pg_config did not list them: the ranks seen in the dumps
  std::vector<int> without_dump;  // members with no dump in the directory: not judged
  std::int64_t first_seq = -1, last_seq = -1;  // the collectives every buffer still holds
  std::int64_t matched = 0;  // of those, joined alike by every member, from first_seq
  std::int64_t p2p = 0;      // point-to-point operations, not matched
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
  std::vector<GroupMatch> groups;
  int first_mismatch = -1;  // index into groups of the earliest mismatch, or -1
};

CollectiveMatch match_collectives(const std::vector<formats::torch_fr::Dump>& dumps);

// The result as JSON (docs/report.md: gpuprobe.collectives/1).
std::string collective_match_json(const CollectiveMatch& m);

}  // namespace gpuprobe::analysis
