// PyTorch's flight recorder (c10d's FlightRecorder, on with TORCH_FR_BUFFER_SIZE or
// TORCH_NCCL_TRACE_BUFFER_SIZE): the last collectives of each process, dumped per rank on a
// timeout or on demand as a pickled dict {version, pg_config, pg_status, entries, ...} into a file
// named by a prefix and the rank (TORCH_FR_DUMP_TEMP_FILE, default /tmp/nccl_trace_rank_<rank>).
// The part gpuprobe reads, as one schema for the reader (readers/torch_flight_recorder_reader.h)
// and the analysis that matches ranks (analysis/collective_match.h). Header only: nothing of it
// is compiled into the recording library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::formats::torch_fr {

// The dump's keys.
inline constexpr const char* kEntries = "entries";
inline constexpr const char* kVersion = "version";
inline constexpr const char* kPgConfig = "pg_config";
inline constexpr const char* kPgStatus = "pg_status";

struct Frame {
  std::string name, file;
  std::int64_t line = 0;
};

// One collective or point-to-point operation as one rank recorded it.
struct Entry {
  std::string pg_name, pg_desc;         // process_group: (name, description)
  std::int64_t collective_seq_id = -1;  // per process group, from 1; "seq_id" in old dumps
  std::int64_t p2p_seq_id = -1;
  std::int64_t record_id = -1;
  bool is_p2p = false;
  std::string profiling_name;             // "nccl:all_reduce", "gloo:broadcast"
  std::string state;                      // "scheduled", "started", "completed"
  std::string input_sizes, output_sizes;  // as Python prints them: "[[1024, 1024]]"
  std::string input_dtypes, output_dtypes;
  std::int64_t time_created_ns = 0;    // CLOCK_REALTIME, when the rank issued it
  std::int64_t time_started_ns = 0;    // time_discovered_started_ns; 0 when not seen
  std::int64_t time_completed_ns = 0;  // time_discovered_completed_ns; 0 when not seen
  double duration_ms = -1;             // with TORCH_NCCL_ENABLE_TIMING; else -1
  std::int64_t timeout_ms = 0;
  bool retired = false;       // the recorder is done with it (completed, or failed)
  std::vector<Frame> frames;  // innermost first
};

struct ProcessGroup {
  std::string name, desc;
  std::vector<int> ranks;  // global ranks
};

// What the dump says of one process group's progress (pg_status); -1 where it has no figure.
struct GroupStatus {
  std::string pg_name;
  std::int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
};

struct Dump {
  std::string file;
  int rank = -1;  // from the file name's trailing digits, as PyTorch names the files
  std::string version;
  std::vector<ProcessGroup> groups;
  std::vector<GroupStatus> status;
  std::vector<Entry> entries;  // oldest first
};

}  // namespace gpuprobe::formats::torch_fr
