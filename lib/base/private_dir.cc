#include "base/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpuprobe::base {

Status open_private_directory(const std::string& path, bool create, uid_t owner, int* fd) {
  *fd = -1;
  if (path.empty() || path.front() != '/') {
    return Status::Error(path + ": not an absolute path");
  }
  if (create && ::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Error(path + ": cannot create it (" + std::strerror(errno) + ")");
  }
  const int dir = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) {
    const int err = errno;
    // O_NOFOLLOW on a link gives ELOOP (or ENOTDIR with O_DIRECTORY on some kernels).
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Status::Error(path + ": is a symbolic link; refusing it");
    }
    return Status::Error(path + ": cannot open it (" + std::strerror(err) + ")");
  }
  struct stat st {};
  if (::fstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    ::close(dir);
    return Status::Error(path + ": not a directory");
  }
  if (st.st_uid != owner) {
    ::close(dir);
    return Status::Error(path + ": belongs to uid " + std::to_string(st.st_uid) + ", not uid " +
                         std::to_string(owner) + "; refusing it");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(dir);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::Error(path + ": mode " + mode +
                         " lets others in (it must be 0700, this user's alone); refusing it");
  }
  *fd = dir;
  return {};
}

}  // namespace gpuprobe::base
