// The dump directory: how a dump is named, and the disk cap that deletes the oldest dumps.
#pragma once

#include <cstdint>
#include <string>

namespace gpuprobe::flight {

// "gpuprobe_dump_20261201T214400.123Z_host_pid1234_rank0": UTC time first, so that names sort
// as the dumps were taken; the rank only when it is known. Characters a path should not hold
// are replaced in the host name.
std::string dump_name(std::int64_t wall_ns, const std::string& host, std::int64_t pid, int rank);

// True when `name` in `dir` is a dump this user's gpuprobe wrote: a directory (not a link) named
// as dump_name() names them, owned by this user, whose dump.json (a regular file of this user's)
// begins with the format marker. Anything else in a dump directory is never gpuprobe's to delete.
bool is_own_dump(const std::string& dir, const std::string& name);

// Deletes the oldest dumps in `dir` (is_own_dump(), oldest name first) until they take at most
// `max_bytes`, never `keep` (the dump just written). Returns how many it deleted; `bytes_left`
// gets what the remaining ones take. Deleting follows no link and goes at most 8 levels deep.
int enforce_disk_cap(const std::string& dir, std::uint64_t max_bytes, const std::string& keep,
                     std::uint64_t* bytes_left);

}  // namespace gpuprobe::flight
