#include "base/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace gpuprobe::base {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr std::size_t kCompressedChunk = 1 << 18;

// A temporary file no writer holds locked is left by a killed one, but only once it is this
// old: a writer locks its file right after creating it.
constexpr int kStaleSeconds = 2;

// The directory and the file name of `path`.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// `PATH.tmp-HOST-`: the start of the temporary files this host's writers of PATH create.
std::string temp_prefix(const std::string& name) { return name + ".tmp-" + host_name() + "-"; }

std::string random_hex() {
  std::random_device random;
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(random()));
  return suffix;
}

// Removes this user's `PATH.tmp-HOST-*` files that no writer holds locked and that are older
// than kStaleSeconds: what killed writers left. A live writer of any PID namespace holds its
// lock, so its file is never taken for a stale one.
void remove_stale_temp_files(const std::string& path) {
  const auto [dir, name] = split_path(path);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = temp_prefix(name);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  while (const dirent* entry = readdir(d)) {
    const std::string_view file = entry->d_name;
    if (file.size() <= prefix.size() || file.substr(0, prefix.size()) != prefix) continue;
    const int fd =
        openat(dirfd(d), entry->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) continue;
    struct stat st {};
    struct stat named {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        now.tv_sec - st.st_mtim.tv_sec >= kStaleSeconds && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        fstatat(dirfd(d), entry->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        named.st_dev == st.st_dev && named.st_ino == st.st_ino) {
      unlinkat(dirfd(d), entry->d_name, 0);
    }
    ::close(fd);
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

Status create_new_file(const std::string& path, int* fd) {
  *fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (*fd >= 0) return {};
  const int err = errno;
  Status s = Status::Error("cannot create '" + path + "': " + std::strerror(err));
  errno = err;  // for a caller that tries another name after EEXIST
  return s;
}

OutputFile::~OutputFile() { discard(); }

Status OutputFile::error(std::string_view what, int err) const {
  if (temp_path_.empty())
    return Status::Error(std::string(what) + " '" + path_ + "': " + std::strerror(err));
  return Status::Error(std::string(what) + " '" + path_ + "' (through temporary file '" +
                       temp_path_ + "'): " + std::strerror(err));
}

Status OutputFile::open(std::string path, bool clean_stale) {
  discard();
  path_ = std::move(path);
  written_path_.clear();
  buffer_.clear();
  buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
  temp_path_.clear();
  if (Status s = resolve_output(path_, &target_); !s.ok()) return s;
  if (target_.kind == OutputKind::kDirect) {
    // Non-blocking: a FIFO with no reader is an error now rather than a session start that
    // waits for one, and a reader that stops reading costs a write kStallSeconds at most.
    fd_ = ::open(target_.path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                           (target_.path == path_ ? 0 : O_NOFOLLOW));
    if (fd_ < 0) return error("cannot open", errno);
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || static_cast<unsigned long long>(st.st_dev) != target_.dev ||
        static_cast<unsigned long long>(st.st_ino) != target_.ino) {
      discard();
      return Status::Error("cannot write '" + path_ + "': it was replaced while being opened");
    }
  } else {
    if (clean_stale) remove_stale_temp_files(target_.path);
    const auto [dir, name] = split_path(target_.path);
    for (int attempt = 0; fd_ < 0 && attempt < 16; ++attempt) {
      temp_path_ = dir + "/" + temp_prefix(name) + std::to_string(getpid()) + "-" + random_hex();
      fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) {
      const int err = errno;
      temp_path_.clear();
      return error("cannot create a temporary file for", err);
    }
    flock(fd_, LOCK_EX | LOCK_NB);  // ours alone: a stale-file sweep leaves a locked file be
    struct stat st {};
    if (::fstat(fd_, &st) == 0) {
      dev_ = st.st_dev;
      ino_ = st.st_ino;
    }
  }
  if (ends_with(path_, ".gz")) {
    auto* z = new (std::nothrow) z_stream{};
    // Level 1: traces compress well even at the fastest level, and a slow level would make
    // the sink the bottleneck of the collector. 15 + 16: a gzip header and trailer.
    if (z == nullptr || deflateInit2(z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      delete z;
      discard();
      return Status::Error("cannot start gzip stream for '" + path_ + "'");
    }
    gzip_ = z;
    compressed_.resize(kCompressedChunk);
  }
  return {};
}

Status OutputFile::write_raw(const char* data, std::size_t size) {
  if (fd_ < 0) return Status::Error("cannot write '" + path_ + "': not open");
  auto last_progress = std::chrono::steady_clock::now();
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n > 0) {
      data += n;
      size -= static_cast<std::size_t>(n);
      last_progress = std::chrono::steady_clock::now();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return error("cannot write", errno);
    // A FIFO whose reader is slow, or gone to sleep: wait, but not for ever.
    const auto waited = std::chrono::steady_clock::now() - last_progress;
    const auto left = std::chrono::milliseconds(stall_limit_ms_) - waited;
    if (left <= std::chrono::steady_clock::duration::zero()) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g s", stall_limit_ms_ / 1000.0);
      return Status::Error("cannot write '" + path_ + "': its reader took nothing for " + seconds);
    }
    pollfd p{fd_, POLLOUT, 0};
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(1, ms))) < 0 && errno != EINTR) {
      return error("cannot write", errno);
    }
  }
  return {};
}

Status OutputFile::deflate_into_file(const char* data, std::size_t size, bool finish) {
  auto* z = static_cast<z_stream*>(gzip_);
  do {
    const std::size_t chunk = std::min<std::size_t>(size, 1u << 30);
    z->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z->avail_in = static_cast<uInt>(chunk);
    const bool last = finish && chunk == size;
    int rc = Z_OK;
    do {
      z->next_out = reinterpret_cast<Bytef*>(compressed_.data());
      z->avail_out = static_cast<uInt>(compressed_.size());
      rc = deflate(z, last ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) return Status::Error("cannot compress '" + path_ + "'");
      const std::size_t have = compressed_.size() - z->avail_out;
      if (Status s = write_raw(compressed_.data(), have); !s.ok()) return s;
    } while (z->avail_out == 0 || (last && rc != Z_STREAM_END));
    data += chunk;
    size -= chunk;
  } while (size > 0);
  return {};
}

Status OutputFile::write(std::string_view data) {
  if (gzip_ != nullptr) return deflate_into_file(data.data(), data.size(), false);
  return write_raw(data.data(), data.size());
}

Status OutputFile::flush_if_full() {
  if (buffer_.size() < kFlushBytes) return {};
  Status s = write(buffer_);
  buffer_.clear();
  return s;
}

Status OutputFile::commit() {
  if (!is_open()) return Status::Error("cannot finish '" + path_ + "': not open");
  Status s = gzip_ != nullptr ? deflate_into_file(buffer_.data(), buffer_.size(), true)
                              : write_raw(buffer_.data(), buffer_.size());
  buffer_.clear();
  if (!s.ok()) {
    discard();
    return s;
  }
  end_gzip();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    const int err = errno;
    remove_temp();
    return error("cannot finish", err);
  }
  if (temp_path_.empty()) {  // a special file, written in place
    written_path_ = path_;
    return {};
  }
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
  return place();
}

// The temporary file goes where open() found nothing, or over the regular file it found there;
// anything else there now was put by another writer, and stays.
Status OutputFile::place() {
  const std::string& target = target_.path;
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0 && errno == ENOENT) {
    if (rename_no_replace(temp_path_, target)) {
      temp_path_.clear();
      written_path_ = target;
      return {};
    }
    if (errno != EEXIST) {
      const int err = errno;
      remove_temp();
      return Status::Error("cannot rename the temporary file to '" + target +
                           "': " + std::strerror(err));
    }
  } else if (S_ISREG(st.st_mode) && target_.kind == OutputKind::kRegular &&
             static_cast<unsigned long long>(st.st_dev) == target_.dev &&
             static_cast<unsigned long long>(st.st_ino) == target_.ino) {
    if (std::rename(temp_path_.c_str(), target.c_str()) != 0) {
      const int err = errno;
      remove_temp();
      return Status::Error("cannot rename the temporary file to '" + target +
                           "': " + std::strerror(err));
    }
    temp_path_.clear();
    written_path_ = target;
    return {};
  }
  // Another writer's file (or one that cannot be looked at): it stays, ours goes beside it.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string beside = with_tag(target, std::to_string(getpid()) + "-" + random_hex());
    if (rename_no_replace(temp_path_, beside)) {
      temp_path_.clear();
      written_path_ = beside;
      return Status::Error("'" + target +
                           "' was created or replaced by another writer while this one "
                           "recorded, and is left as it is; this output is in '" +
                           beside + "'");
    }
    if (errno != EEXIST) break;
  }
  const int err = errno;
  remove_temp();
  return Status::Error("'" + target + "' was taken by another writer while this one recorded, " +
                       "and no name beside it could be made: " + std::strerror(err));
}

void OutputFile::remove_temp() noexcept {
  if (!temp_path_.empty()) std::remove(temp_path_.c_str());
  temp_path_.clear();
}

void OutputFile::end_gzip() noexcept {
  if (gzip_ == nullptr) return;
  auto* z = static_cast<z_stream*>(gzip_);
  deflateEnd(z);
  delete z;
  gzip_ = nullptr;
}

void OutputFile::discard() noexcept {
  end_gzip();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  remove_temp();
}

}  // namespace gpuprobe::base
