#include "sinks/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace gpuprobe::sinks {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr std::size_t kFlushBytes = 1 << 20;

// Level 1: traces compress well even at the fastest level, and a slow level would make the
// sink the bottleneck of the collector.
constexpr const char* kGzipMode = "wb1";

// The directory and the file name of `path`.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// `PATH.tmp-HOST-`: the start of the temporary files this host's writers of PATH create. The
// host is part of the name so that a process of another machine or container sharing the
// directory (whose pids mean nothing here) never has its files taken for stale ones.
std::string temp_prefix(const std::string& name) { return name + ".tmp-" + host_name() + "-"; }

// Removes `PATH.tmp-HOST-PID-*` files of this host's processes that no longer exist: what a
// killed writer left.
void remove_stale_temp_files(const std::string& path) {
  const auto [dir, name] = split_path(path);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = temp_prefix(name);
  while (const dirent* entry = readdir(d)) {
    const std::string_view file = entry->d_name;
    if (file.size() <= prefix.size() || file.substr(0, prefix.size()) != prefix) continue;
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '-') continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      unlinkat(dirfd(d), entry->d_name, 0);
    }
  }
  closedir(d);
}

}  // namespace

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

std::string expand_path(std::string path) {
  for (std::size_t at = path.find('%'); at != std::string::npos && at + 1 < path.size();
       at = path.find('%', at)) {
    const char c = path[at + 1];
    const std::string with = c == 'p' ? std::to_string(getpid()) : c == 'h' ? host_name() : "";
    if (with.empty()) {
      at += 2;
      continue;
    }
    path.replace(at, 2, with);
    at += with.size();
  }
  return path;
}

OutputFile::~OutputFile() { discard(); }

Status OutputFile::error(std::string_view what, int err) const {
  if (temp_path_.empty())
    return Status::Error(std::string(what) + " '" + path_ + "': " + std::strerror(err));
  return Status::Error(std::string(what) + " '" + path_ + "' (through temporary file '" +
                       temp_path_ + "'): " + std::strerror(err));
}

Status OutputFile::open(std::string path) {
  discard();
  path_ = std::move(path);
  buffer_.clear();
  buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
  temp_path_.clear();
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return Status::Error("'" + path_ + "' is a directory, not a file");
    // A device, FIFO or socket: written directly. Non-blocking open, so that a FIFO with no
    // reader is an error now rather than a session start that waits for one.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) return error("cannot open", errno);
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  } else {
    remove_stale_temp_files(path_);
    std::random_device random;
    for (int attempt = 0; fd_ < 0 && attempt < 16; ++attempt) {
      char suffix[24];
      std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(random()));
      temp_path_ = split_path(path_).first + "/" + temp_prefix(split_path(path_).second) +
                   std::to_string(getpid()) + "-" + suffix;
      fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) {
      const int err = errno;
      temp_path_.clear();
      return error("cannot create a temporary file for", err);
    }
    if (::fstat(fd_, &st) == 0) {
      dev_ = st.st_dev;
      ino_ = st.st_ino;
    }
  }
  if (ends_with(path_, ".gz")) {
    const int fd = fd_;
    fd_ = -1;
    gz_ = gzdopen(fd, kGzipMode);
    if (gz_ == nullptr) {
      ::close(fd);
      return error("cannot start gzip stream for", ENOMEM);
    }
    gzbuffer(static_cast<gzFile>(gz_), 1 << 18);
  }
  return {};
}

Status OutputFile::write(std::string_view data) {
  if (gz_ != nullptr) {
    while (!data.empty()) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(data.size(), 1u << 30));
      const int n = gzwrite(static_cast<gzFile>(gz_), data.data(), chunk);
      if (n <= 0) {
        int zerr = 0;
        const char* msg = gzerror(static_cast<gzFile>(gz_), &zerr);
        return zerr == Z_ERRNO ? error("cannot write", errno)
                               : Status::Error("cannot write '" + path_ + "': " + msg);
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
  }
  if (fd_ < 0) return Status::Error("cannot write '" + path_ + "': not open");
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return error("cannot write", errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Status OutputFile::flush_if_full() {
  if (buffer_.size() < kFlushBytes) return {};
  Status s = write(buffer_);
  buffer_.clear();
  return s;
}

Status OutputFile::commit() {
  if (Status s = write(buffer_); !s.ok()) {
    buffer_.clear();
    discard();
    return s;
  }
  buffer_.clear();
  if (gz_ != nullptr) {
    const int rc = gzclose(static_cast<gzFile>(gz_));
    gz_ = nullptr;
    if (rc != Z_OK) {
      const int err = rc == Z_ERRNO ? errno : EIO;
      remove_temp();
      return error("cannot finish", err);
    }
  } else if (fd_ >= 0) {
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) {
      const int err = errno;
      remove_temp();
      return error("cannot finish", err);
    }
  } else {
    return Status::Error("cannot finish '" + path_ + "': not open");
  }
  if (temp_path_.empty()) return {};  // a special file, written in place
  struct stat st;
  if (::lstat(temp_path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<unsigned long long>(st.st_dev) != dev_ ||
      static_cast<unsigned long long>(st.st_ino) != ino_) {
    // Someone replaced or removed the temporary file while we wrote: what is there now is not
    // ours, so it is neither renamed over the output nor removed.
    const std::string temp = temp_path_;
    temp_path_.clear();
    return Status::Error("the temporary file '" + temp + "' for '" + path_ +
                         "' was replaced or removed while recording; '" + path_ +
                         "' was not written");
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    remove_temp();
    return Status::Error("cannot rename '" + temp_path_ + "' to '" + path_ +
                         "': " + std::strerror(err));
  }
  temp_path_.clear();
  return {};
}

void OutputFile::remove_temp() noexcept {
  if (!temp_path_.empty()) std::remove(temp_path_.c_str());
}

void OutputFile::discard() noexcept {
  if (!is_open()) return;
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
  if (fd_ >= 0) ::close(fd_);
  gz_ = nullptr;
  fd_ = -1;
  remove_temp();
  temp_path_.clear();
}

}  // namespace gpuprobe::sinks
