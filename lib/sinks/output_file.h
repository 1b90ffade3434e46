// A file that appears under its final name only when it is complete: written to a temporary
// file next to it and renamed on commit(), so a crash never leaves half an output behind.
// A path ending in ".gz" is gzip-compressed. Writers append to buffer() and call
// flush_if_full() now and then; commit() writes what is left.
//
// The temporary file is `PATH.tmp-HOST-PID-RANDOM`, created exclusively (O_EXCL) and without
// following a symbolic link (O_NOFOLLOW), so neither a planted link nor another process with the
// same pid (a container on a shared volume) can make two writers share a file. commit() renames it
// only if the name still leads to the file written (same device and inode). A path that is not a
// regular file — /dev/null, a FIFO, /dev/stdout — is written directly, never replaced; a
// directory is refused at open(). Temporary files of this path left by processes that no
// longer exist are removed at open().
#pragma once

#include <string>
#include <string_view>

#include "gpuprobe/status.hpp"

namespace gpuprobe::sinks {

// This machine's host name, for output file names ("localhost" when it cannot be read).
std::string host_name();

// `path` with "%p" replaced by this process's pid and "%h" by the host name, as in Nsight
// Systems' output names: one config for a family of processes, a file for each.
std::string expand_path(std::string path);

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Creates the temporary file for `path`.
  Status open(std::string path);
  Status write(std::string_view data);
  // Where writers append their output; written out by flush_if_full() and commit().
  std::string& buffer() noexcept { return buffer_; }
  // Writes the buffer once it holds a megabyte or more, so writes are few and large.
  Status flush_if_full();
  // Writes the buffer, closes and renames the temporary file to the final path; on failure
  // removes the temporary file.
  Status commit();
  // Closes and removes the temporary file.
  void discard() noexcept;

  const std::string& path() const noexcept { return path_; }
  bool is_open() const noexcept { return fd_ >= 0 || gz_ != nullptr; }

 private:
  Status error(std::string_view what, int err) const;
  void remove_temp() noexcept;

  std::string path_;
  std::string temp_path_;  // empty when writing a special file directly
  std::string buffer_;
  int fd_ = -1;
  // The temporary file as created, to see at commit() that its name still leads to it.
  unsigned long long dev_ = 0, ino_ = 0;
  void* gz_ = nullptr;  // gzFile; void* keeps zlib.h out of this header
};

}  // namespace gpuprobe::sinks
