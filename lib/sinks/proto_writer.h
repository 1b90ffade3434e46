// Protocol Buffers wire format, appended to a string by hand: the hot part of the Perfetto sink,
// where generated classes would allocate per message. Nested messages are encoded into scratch
// buffers reused across calls, so each gets an exact (usually one-byte) length.
// Hand-written, as Perfetto's own protozero is, for the same reason: the tests check the bytes
// against Perfetto's real schema with protoc-generated classes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprobe::sinks {

// Writes `v` as a varint at b[n] and advances n; b needs up to 10 free bytes.
inline void put_varint(char* b, std::size_t& n, std::uint64_t v) {
  while (v >= 0x80) {
    b[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<char>(v);
}

// Appends the tag and length of a length-delimited field whose `length` bytes follow.
inline void append_field_header(std::string* out, std::uint32_t field, std::uint64_t length) {
  char b[20];
  std::size_t n = 0;
  put_varint(b, n, static_cast<std::uint64_t>(field) << 3 | 2);
  put_varint(b, n, length);
  out->append(b, n);
}

// The number of bytes put_varint() writes for `v`.
inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

class ProtoWriter {
 public:
  // Appends to `out`; `scratch` holds one buffer per nesting level, built in by nested messages.
  // It must already have a buffer for the deepest level used: growing it here would move the
  // buffers outer levels are writing into.
  ProtoWriter(std::string* out, std::vector<std::string>* scratch, std::size_t depth = 0)
      : out_(out), scratch_(scratch), depth_(depth) {}

  void varint(std::uint32_t field, std::uint64_t v) {
    raw_varint(static_cast<std::uint64_t>(field) << 3);
    raw_varint(v);
  }
  void fixed64(std::uint32_t field, std::uint64_t v) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 1);
    char b[8];
    std::memcpy(b, &v, 8);  // little-endian hosts only (x86-64, aarch64)
    out_->append(b, 8);
  }
  void double_value(std::uint32_t field, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    fixed64(field, bits);
  }
  void float_value(std::uint32_t field, float v) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 5);
    char b[4];
    std::memcpy(b, &v, 4);  // fixed32, little-endian hosts only
    out_->append(b, 4);
  }
  // A packed repeated double field.
  void packed_doubles(std::uint32_t field, const double* v, std::size_t n) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 2);
    raw_varint(n * 8);
    out_->append(reinterpret_cast<const char*>(v), n * 8);  // little-endian hosts only
  }
  void bytes(std::uint32_t field, std::string_view v) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 2);
    raw_varint(v.size());
    out_->append(v.data(), v.size());
  }
  // Bytes that are already encoded fields.
  void raw(std::string_view encoded) { out_->append(encoded.data(), encoded.size()); }
  // A nested message that `fill(ProtoWriter&)` writes.
  template <class Fill>
  void message(std::uint32_t field, Fill&& fill) {
    std::string& inner = (*scratch_)[depth_];
    inner.clear();
    ProtoWriter nested(&inner, scratch_, depth_ + 1);
    fill(nested);
    bytes(field, inner);
  }

 private:
  void raw_varint(std::uint64_t v) {
    char b[10];
    std::size_t n = 0;
    put_varint(b, n, v);
    out_->append(b, n);
  }

  std::string* out_;
  std::vector<std::string>* scratch_;
  std::size_t depth_;
};

}  // namespace gpuprobe::sinks
