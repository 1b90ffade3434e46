// The dump directory: how a dump is named, and the disk cap that deletes the oldest dumps.
#pragma once

#include <cstdint>
#include <string>

namespace gpuprobe::flight {

// "gpuprobe_dump_20261201T214400.123Z_host_pid1234_rank0": UTC time first, so that names sort
// as the dumps were taken; the rank only when it is known. Characters a path should not hold
// are replaced in the host name.
std::string dump_name(std::int64_t wall_ns, const std::string& host, std::int64_t pid, int rank);

// Deletes the oldest dumps in `dir` (directories holding a dump.json, oldest name first) until
// they take at most `max_bytes`, never `keep` (the dump just written). Returns how many it
// deleted; `bytes_left` gets what the remaining ones take.
int enforce_disk_cap(const std::string& dir, std::uint64_t max_bytes, const std::string& keep,
                     std::uint64_t* bytes_left);

}  // namespace gpuprobe::flight
