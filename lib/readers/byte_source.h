// The bytes of a trace file, read forward through a buffer: a plain or gzip-compressed file
// (told apart by content, not by name), or memory (fuzzers, tests). Readers report errors by
// offset() — the position in the uncompressed stream — so a message points at the bad byte.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::readers {

class ByteSource {
 public:
  // Opens `path`; gzip is detected from its magic bytes.
  static Status open_file(const std::string& path, std::unique_ptr<ByteSource>* out);
  // Reads `data`, which must outlive the source.
  static std::unique_ptr<ByteSource> from_memory(std::string_view data, std::string name);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // The next byte, or -1 at the end (or after a read error: see status()).
  int peek() {
    if (pos_ == len_ && !refill()) return -1;
    return static_cast<unsigned char>(data_[pos_]);
  }
  int get() {
    const int c = peek();
    if (c >= 0) ++pos_;
    return c;
  }
  // The bytes buffered from the current position on (refilling when none are); empty at the
  // end. Consume them with advance().
  std::string_view available() {
    if (pos_ == len_ && !refill()) return {};
    return std::string_view(data_ + pos_, len_ - pos_);
  }
  void advance(std::size_t n) { pos_ += n; }
  // Copies up to `n` bytes to `out`; returns how many (fewer only at the end).
  std::size_t read(char* out, std::size_t n);
  // Skips up to `n` bytes; returns how many.
  std::size_t skip(std::size_t n);

  // Bytes consumed so far, in the uncompressed stream.
  std::uint64_t offset() const noexcept { return consumed_ + pos_; }
  // The share of the input consumed, 0..1, for progress reports.
  double progress() const;
  const std::string& name() const noexcept { return name_; }
  bool compressed() const noexcept { return compressed_; }
  // "<name>: byte <at>: expected <what>", the form of every reader's errors.
  Status error_at(std::uint64_t at, const std::string& what) const {
    return Status::Error(name_ + ": byte " + std::to_string(at) + ": expected " + what);
  }
  // An I/O or decompression error met while reading, if any.
  const Status& status() const noexcept { return status_; }

 private:
  ByteSource() = default;
  bool refill();

  std::string name_;
  void* gz_ = nullptr;  // gzFile (plain files too: zlib reads them transparently)
  bool compressed_ = false;
  std::uint64_t file_size_ = 0;
  std::vector<char> buffer_;
  const char* data_ = nullptr;
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t consumed_ = 0;  // bytes before data_
  Status status_;
};

}  // namespace gpuprobe::readers
