#include "sinks/output_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpuprobe::sinks {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

constexpr std::size_t kFlushBytes = 1 << 20;

// Level 1: traces compress well even at the fastest level, and a slow level would make the
// sink the bottleneck of the collector.
constexpr const char* kGzipMode = "wb1";

}  // namespace

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

OutputFile::~OutputFile() { discard(); }

Status OutputFile::error(std::string_view what, int err) const {
  return Status::Error(std::string(what) + " '" + path_ + "' (through temporary file '" +
                       temp_path_ + "'): " + std::strerror(err));
}

Status OutputFile::open(std::string path) {
  discard();
  path_ = std::move(path);
  buffer_.clear();
  buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
  temp_path_ = path_ + ".tmp-" + std::to_string(getpid());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return error("cannot create", errno);
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
      std::remove(temp_path_.c_str());
      return error("cannot finish", err);
    }
  } else if (fd_ >= 0) {
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) {
      const int err = errno;
      std::remove(temp_path_.c_str());
      return error("cannot finish", err);
    }
  } else {
    return Status::Error("cannot finish '" + path_ + "': not open");
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path_.c_str());
    return Status::Error("cannot rename '" + temp_path_ + "' to '" + path_ +
                         "': " + std::strerror(err));
  }
  return {};
}

void OutputFile::discard() noexcept {
  if (!is_open()) return;
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
  if (fd_ >= 0) ::close(fd_);
  gz_ = nullptr;
  fd_ = -1;
  std::remove(temp_path_.c_str());
}

}  // namespace gpuprobe::sinks
