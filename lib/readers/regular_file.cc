#include "readers/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuprobe::readers {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

}  // namespace

Status open_regular_file(const std::string& path, int* fd, std::uint64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f < 0) return Status::Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(f, &st) != 0) {
    const int err = errno;
    ::close(f);
    return Status::Error(path + ": cannot open: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(f);
    return Status::Error(path + ": not a regular file (" + kind_of(st.st_mode) + ")");
  }
  // Reads of a regular file ignore O_NONBLOCK, but clear it for whoever reads the descriptor.
  const int flags = fcntl(f, F_GETFL);
  if (flags >= 0) fcntl(f, F_SETFL, flags & ~O_NONBLOCK);
  *fd = f;
  *size = st.st_size > 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return {};
}

Status read_regular_file(const std::string& path, std::size_t max_bytes, std::string* out) {
  int fd = -1;
  std::uint64_t size = 0;
  if (Status s = open_regular_file(path, &fd, &size); !s.ok()) return s;
  const std::string too_large =
      path + ": larger than " + std::to_string(max_bytes) + " bytes, more than this file holds";
  if (size > max_bytes) {
    ::close(fd);
    return Status::Error(too_large);
  }
  out->clear();
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::Error(path + ": cannot read: " + std::strerror(err));
    }
    if (n == 0) break;
    // The file may grow while it is read: the limit holds for what is read, not for fstat's size.
    if (out->size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return Status::Error(too_large);
    }
    out->append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return {};
}

}  // namespace gpuprobe::readers
