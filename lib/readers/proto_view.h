// Decoding the Protocol Buffers wire format from bytes in memory, field by field, with every
// length checked against what is left: for the trace readers, whose input may be corrupt.
// Hand-written rather than protoc's classes: the reader walks gigabyte traces field by field
// without materializing messages, and must survive any corruption (the tests decode gpuprobe's
// Perfetto output with protoc-generated classes, independently).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpuprobe::readers {

class ProtoView {
 public:
  explicit ProtoView(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  // Advances to the next field; false at the end or on malformed input (then ok() is false).
  bool next() {
    if (p_ == end_ || !ok_) return false;
    std::uint64_t tag;
    if (!varint(&tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) return fail();
    field_ = static_cast<std::uint32_t>(tag >> 3);
    wire_ = static_cast<int>(tag & 7);
    switch (wire_) {
      case 0:
        return varint(&value_) || fail();
      case 1:
        if (end_ - p_ < 8) return fail();
        std::memcpy(&value_, p_, 8);
        p_ += 8;
        return true;
      case 5: {
        if (end_ - p_ < 4) return fail();
        std::uint32_t v;
        std::memcpy(&v, p_, 4);
        value_ = v;
        p_ += 4;
        return true;
      }
      case 2: {
        std::uint64_t n;
        if (!varint(&n) || n > static_cast<std::uint64_t>(end_ - p_)) return fail();
        bytes_ = std::string_view(p_, static_cast<std::size_t>(n));
        p_ += n;
        return true;
      }
      default:
        return fail();  // groups (3, 4) are not used by these formats
    }
  }

  std::uint32_t field() const { return field_; }
  std::uint64_t u64() const { return value_; }
  std::int64_t i64() const { return static_cast<std::int64_t>(value_); }
  double f64() const {
    double d;
    std::memcpy(&d, &value_, 8);
    return d;
  }
  std::string_view bytes() const { return wire_ == 2 ? bytes_ : std::string_view(); }
  bool ok() const { return ok_; }

 private:
  bool varint(std::uint64_t* out) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const auto b = static_cast<unsigned char>(*p_++);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        *out = v;
        return true;
      }
    }
    return false;
  }
  bool fail() {
    ok_ = false;
    return false;
  }

  const char* p_;
  const char* end_;
  std::uint32_t field_ = 0;
  int wire_ = 0;
  std::uint64_t value_ = 0;
  std::string_view bytes_;
  bool ok_ = true;
};

}  // namespace gpuprobe::readers
