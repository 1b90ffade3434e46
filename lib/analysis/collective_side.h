// One rank's record of a collective or point-to-point operation in PyTorch's flight recorder
// (formats/torch_flight_recorder.h), as the collective and point-to-point matches report it.
#pragma once

#include <cstdint>
#include <string>

#include "formats/torch_flight_recorder.h"

namespace gpuprobe::analysis {

struct CollectiveSide {
  int rank = -1;
  std::string pg_name;    // the process group of `last` entries, which may be another group
  std::int64_t seq = -1;  // the collective's sequence id; a point-to-point's p2p_seq_id
  std::string name, input_sizes, input_dtypes, state;
  std::int64_t created_ns = 0, started_ns = 0, completed_ns = 0;
  std::string where;  // the innermost frame outside torch: "train.py:42 in step"
  bool p2p = false;   // a point-to-point operation
};

// `e` as `rank` recorded it; `seq` is its collective sequence id, or its p2p_seq_id when it is
// a point-to-point operation.
CollectiveSide side_of(int rank, const formats::torch_fr::Entry& e, bool p2p = false);

// The last operation `d`'s rank issued, in any group: what a rank missing from an operation was
// doing instead. Only `rank` is set when it recorded nothing.
CollectiveSide last_operation(const formats::torch_fr::Dump& d);

}  // namespace gpuprobe::analysis
