#include "base/output_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace gpuprobe::base {
namespace {

// Links followed before a path is refused, as the kernel's own limit for one lookup.
constexpr int kMaxLinks = 8;

bool starts_with(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

bool all_digits(const std::string& s, std::size_t from) {
  if (from >= s.size()) return false;
  for (std::size_t i = from; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// A name for one of the program's own descriptors: it already holds them open.
bool own_descriptor(const std::string& path) {
  if (path == "/dev/stdout" || path == "/dev/stderr") return true;
  if (starts_with(path, "/dev/fd/")) return all_digits(path, 8);
  if (starts_with(path, "/proc/self/fd/")) return all_digits(path, 14);
  return false;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status refuse(const std::string& path, const std::string& why) {
  return Status::Error("cannot write '" + path + "': " + why);
}

// Reads the link at `path` itself (opened, not followed, so that its owner and its target are
// those of one link even if the name is replaced meanwhile). False with errno set.
bool read_link(const std::string& path, struct stat* st, std::string* target) {
  const int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  bool ok = ::fstat(fd, st) == 0 && S_ISLNK(st->st_mode);
  ssize_t n = -1;
  if (ok) n = ::readlinkat(fd, "", buf, sizeof buf);
  const int err = errno;
  ::close(fd);
  if (!ok || n < 0 || static_cast<std::size_t>(n) >= sizeof buf) {
    errno = ok ? (n < 0 ? err : ENAMETOOLONG) : EINVAL;
    return false;
  }
  target->assign(buf, static_cast<std::size_t>(n));
  return true;
}

}  // namespace

Status resolve_output(const std::string& path, ResolvedOutput* out) {
  *out = ResolvedOutput{};
  struct stat st {};
  if (own_descriptor(path)) {
    if (::stat(path.c_str(), &st) != 0) return refuse(path, std::strerror(errno));
    if (S_ISDIR(st.st_mode)) return refuse(path, "it is a directory");
    *out = ResolvedOutput{path, OutputKind::kDirect, static_cast<unsigned long long>(st.st_dev),
                          static_cast<unsigned long long>(st.st_ino)};
    return {};
  }
  const uid_t me = ::geteuid();
  std::string p = path;
  for (int links = 0;; ++links) {
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT) return refuse(path, std::strerror(errno));
      out->path = p;
      out->kind = OutputKind::kAbsent;
      return {};
    }
    if (S_ISLNK(st.st_mode)) {
      if (links == kMaxLinks) return refuse(path, "too many levels of symbolic links");
      std::string target;
      if (!read_link(p, &st, &target)) return refuse(path, std::strerror(errno));
      if (st.st_uid != me && st.st_uid != 0) {
        return refuse(path, "'" + p + "' is a symbolic link of another user (uid " +
                                std::to_string(st.st_uid) +
                                "); gpuprobe follows only links of its own user (uid " +
                                std::to_string(me) + ") or root");
      }
      p = !target.empty() && target.front() == '/' ? target : directory_of(p) + "/" + target;
      continue;
    }
    out->path = p;
    out->dev = static_cast<unsigned long long>(st.st_dev);
    out->ino = static_cast<unsigned long long>(st.st_ino);
    if (S_ISREG(st.st_mode)) {
      out->kind = OutputKind::kRegular;
      return {};
    }
    if (S_ISDIR(st.st_mode)) return Status::Error("'" + path + "' is a directory, not a file");
    if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {  // /dev/null, under any name
      out->kind = OutputKind::kDirect;
      return {};
    }
    if (S_ISFIFO(st.st_mode) && st.st_uid == me) {
      out->kind = OutputKind::kDirect;
      return {};
    }
    if (S_ISFIFO(st.st_mode)) {
      return refuse(path, "'" + p + "' is a FIFO of another user (uid " +
                              std::to_string(st.st_uid) +
                              "); gpuprobe writes only into FIFOs of its own user");
    }
    return refuse(path, "'" + p +
                            "' is a device or socket; gpuprobe writes only regular files, "
                            "/dev/null, FIFOs of its own user and the program's own stdout/stderr");
  }
}

std::string output_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return path;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal().string() : resolved.string();
}

std::string with_tag(const std::string& path, const std::string& tag) {
  const std::size_t slash = path.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = path.find('.', base + 1);  // a leading dot is part of the name
  std::string out = path;
  out.insert(dot == std::string::npos ? out.size() : dot, "." + tag);
  return out;
}

bool rename_no_replace(const std::string& from, const std::string& to) noexcept {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return true;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return false;
  // A file system without RENAME_NOREPLACE: link() fails where the name exists.
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return true;
  }
  if (errno != EPERM) return false;
  // A directory (no hard links to them): as close as a plain rename gets.
  struct stat st {};
  if (::lstat(to.c_str(), &st) == 0) {
    errno = EEXIST;
    return false;
  }
  return ::rename(from.c_str(), to.c_str()) == 0;
}

}  // namespace gpuprobe::base
