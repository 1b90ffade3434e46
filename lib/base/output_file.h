// The one way gpuprobe writes a file: traces, the metrics file, TensorBoard's XSpace, dumps and
// window files all go through OutputFile (TensorBoard's events file, appended while TensorBoard
// reads it, through create_new_file()). A file appears under its final name only when complete.
//
// Where it writes is decided by resolve_output() (base/output_path.h): links of other users,
// devices, sockets and other users' FIFOs are refused at open(), with one error naming the path.
// A regular file (or nothing) is written to `PATH.tmp-HOST-PID-RANDOM` in the same directory,
// created exclusively (O_EXCL) without following a link (O_NOFOLLOW) and locked (flock) while
// it is written; commit() renames it only if that name still leads to the file written, and
// only over what open() found there: if another writer created or replaced PATH meanwhile (two
// processes, maybe of two PID namespaces, given one path), the output goes beside it
// (trace.json: `trace.PID-RANDOM.json`) and commit() says so. /dev/null, a FIFO of this user's
// and the program's own stdout/stderr are written directly, each write waiting at most
// kStallSeconds for a reader that takes nothing. Temporary files of this path that no writer
// holds locked (left by a killed process) are removed at open(). A path ending in ".gz" is
// gzip-compressed. Writers append to buffer() and call flush_if_full() now and then.
#pragma once

#include <string>
#include <string_view>

#include "base/output_path.h"
#include "gpuprobe/status.hpp"

namespace gpuprobe::base {

// This machine's host name, for output file names ("localhost" when it cannot be read).
std::string host_name();

// `path` with "%p" replaced by this process's pid and "%h" by the host name, as in Nsight
// Systems' output names: one config for a family of processes, a file for each.
std::string expand_path(std::string path);

// Creates `path` as a new, empty regular file of this process's, never one that exists or a
// link (O_CREAT | O_EXCL | O_NOFOLLOW): for a file appended to while others read it. On
// failure errno is left as open() set it (EEXIST: try another name).
[[nodiscard]] Status create_new_file(const std::string& path, int* fd);

class OutputFile {
 public:
  // How long a write waits for a FIFO's reader that takes nothing, before it fails.
  static constexpr int kStallSeconds = 10;

  OutputFile() = default;
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Resolves `path` and creates its temporary file. `clean_stale`: also remove the temporary
  // files killed writers of this path left (a directory listing; skipped by a writer that
  // rewrites one file every second).
  [[nodiscard]] Status open(std::string path, bool clean_stale = true);
  [[nodiscard]] Status write(std::string_view data);
  // Where writers append their output; written out by flush_if_full() and commit().
  std::string& buffer() noexcept { return buffer_; }
  // Writes the buffer once it holds a megabyte or more, so writes are few and large.
  [[nodiscard]] Status flush_if_full();
  // Writes the buffer, closes and renames the temporary file into place; on failure removes
  // the temporary file. When another writer took the path meanwhile, the output is renamed
  // beside it instead (written_path()) and the error says where.
  [[nodiscard]] Status commit();
  // Closes and removes the temporary file.
  void discard() noexcept;

  const std::string& path() const noexcept { return path_; }
  // Where commit() put the output: path(), or the name beside it after a collision.
  const std::string& written_path() const noexcept { return written_path_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  // Sets how long a write may wait without progress (kStallSeconds unless set; tests wait less).
  void set_stall_limit_ms(int ms) noexcept { stall_limit_ms_ = ms; }

 private:
  Status error(std::string_view what, int err) const;
  Status write_raw(const char* data, std::size_t size);
  Status deflate_into_file(const char* data, std::size_t size, bool finish);
  Status place();
  void remove_temp() noexcept;
  void end_gzip() noexcept;

  std::string path_;
  ResolvedOutput target_;
  std::string temp_path_;  // empty when writing a special file directly
  std::string written_path_;
  std::string buffer_;
  int fd_ = -1;
  int stall_limit_ms_ = kStallSeconds * 1000;
  // The temporary file as created, to see at commit() that its name still leads to it.
  unsigned long long dev_ = 0, ino_ = 0;
  void* gzip_ = nullptr;  // z_stream for a ".gz" path; void* keeps zlib.h out of this header
  std::string compressed_;
};

}  // namespace gpuprobe::base
