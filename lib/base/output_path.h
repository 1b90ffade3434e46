// What gpuprobe may write at a path, decided once for every file it writes (traces, the metrics
// file, TensorBoard's files, dumps, window files), so that no output can be aimed at somebody
// else's file:
//   - the program's own standard output or error (/dev/stdout, /dev/stderr, /dev/fd/N,
//     /proc/self/fd/N) is written directly: a descriptor the program already holds;
//   - a symbolic link as the last component is followed only when it belongs to this user or to
//     root (as the kernel's protected_symlinks has it for sticky directories, but everywhere):
//     a link another user planted is refused;
//   - a regular file, or nothing, is written through a new temporary file and a rename;
//   - /dev/null is written directly, and so is a FIFO that belongs to this user;
//   - anything else (a device, a socket, another user's FIFO, a directory) is refused.
#pragma once

#include <string>

#include "gpuprobe/status.hpp"

namespace gpuprobe::base {

// What `resolve_output` found at a path.
enum class OutputKind {
  kAbsent,   // nothing: created by rename
  kRegular,  // a regular file: replaced by rename
  kDirect,   // written in place: /dev/null, a FIFO of this user's, the program's own stdout
};

// A path resolved for writing.
struct ResolvedOutput {
  std::string path;  // after the links this user may follow
  OutputKind kind = OutputKind::kAbsent;
  // What was there (kRegular, kDirect), to see later whether another writer replaced it.
  unsigned long long dev = 0, ino = 0;
};

// Resolves `path` by the rules above; an error names the path and why it is refused.
[[nodiscard]] Status resolve_output(const std::string& path, ResolvedOutput* out);

// The identity of the file an output path leads to, for finding two outputs on one file:
// "dev:ino" where something exists, else the absolute path with its directory resolved.
std::string output_identity(const std::string& path);

// `path` with `tag` inserted before the extension of its last component:
// ("dir/trace.json.gz", "4242") gives "dir/trace.4242.json.gz".
std::string with_tag(const std::string& path, const std::string& tag);

// rename() that never replaces what is at `to` (renameat2's RENAME_NOREPLACE, or link and
// unlink where the file system lacks it): false with errno EEXIST when something is there.
bool rename_no_replace(const std::string& from, const std::string& to) noexcept;

}  // namespace gpuprobe::base
