#include "analysis/collective_side.h"

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

}  // namespace

CollectiveSide side_of(int rank, const fr::Entry& e, bool p2p) {
  return {rank,
          e.pg_name,
          p2p ? e.p2p_seq_id : e.collective_seq_id,
          e.profiling_name,
          e.input_sizes,
          e.input_dtypes,
          e.state,
          e.time_created_ns,
          e.time_started_ns,
          e.time_completed_ns,
          where_of(e),
          p2p};
}

CollectiveSide last_operation(const fr::Dump& d) {
  const fr::Entry* last = nullptr;
  for (const fr::Entry& e : d.entries)
    if (last == nullptr || e.time_created_ns >= last->time_created_ns) last = &e;
  if (last == nullptr) {
    CollectiveSide none;
    none.rank = d.rank;
    return none;
  }
  return side_of(d.rank, *last, last->is_p2p);
}

}  // namespace gpuprobe::analysis
