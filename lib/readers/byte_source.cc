#include "readers/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "readers/regular_file.h"

namespace gpuprobe::readers {
namespace {
constexpr std::size_t kBufferBytes = 1 << 20;
}

Status ByteSource::open_file(const std::string& path, std::unique_ptr<ByteSource>* out) {
  int fd = -1;
  std::uint64_t size = 0;
  if (Status s = open_regular_file(path, &fd, &size); !s.ok()) return s;
  unsigned char magic[2] = {0, 0};
  const bool gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  gzFile gz = gzdopen(fd, "rb");
  if (gz == nullptr) {
    ::close(fd);
    return Status::Error(path + ": cannot start reading");
  }
  gzbuffer(gz, 1 << 18);
  std::unique_ptr<ByteSource> s(new ByteSource);
  s->name_ = path;
  s->gz_ = gz;
  s->compressed_ = gzip;
  s->file_size_ = size;
  s->buffer_.resize(kBufferBytes);
  s->data_ = s->buffer_.data();
  *out = std::move(s);
  return {};
}

std::unique_ptr<ByteSource> ByteSource::from_memory(std::string_view data, std::string name) {
  std::unique_ptr<ByteSource> s(new ByteSource);
  s->name_ = std::move(name);
  s->data_ = data.data();
  s->len_ = data.size();
  s->file_size_ = data.size();
  return s;
}

ByteSource::~ByteSource() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

bool ByteSource::refill() {
  if (gz_ == nullptr || !status_.ok()) return false;
  consumed_ += len_;
  pos_ = len_ = 0;
  const int n =
      gzread(static_cast<gzFile>(gz_), buffer_.data(), static_cast<unsigned>(buffer_.size()));
  if (n < 0) {
    int err = 0;
    const char* what = gzerror(static_cast<gzFile>(gz_), &err);
    status_ = Status::Error(name_ + ": byte " + std::to_string(consumed_) +
                            ": cannot read: " + (what != nullptr ? what : "I/O error"));
    return false;
  }
  len_ = static_cast<std::size_t>(n);
  return len_ > 0;
}

std::size_t ByteSource::read(char* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    if (pos_ == len_ && !refill()) break;
    const std::size_t take = std::min(n - done, len_ - pos_);
    std::memcpy(out + done, data_ + pos_, take);
    pos_ += take;
    done += take;
  }
  return done;
}

std::size_t ByteSource::skip(std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    if (pos_ == len_ && !refill()) break;
    const std::size_t take = std::min(n - done, len_ - pos_);
    pos_ += take;
    done += take;
  }
  return done;
}

double ByteSource::progress() const {
  if (file_size_ == 0) return 1.0;
  const double at = gz_ != nullptr && compressed_
                        ? static_cast<double>(gzoffset(static_cast<gzFile>(gz_)))
                        : static_cast<double>(offset());
  return std::min(1.0, at / static_cast<double>(file_size_));
}

}  // namespace gpuprobe::readers
