// A forward-only JSON tokenizer over a ByteSource, for traces too large to hold: the reader asks
// for the value it expects next, and anything else is an error naming the byte offset and what
// was expected. Strings are capped (a trace's names are short; a gigabyte string is corruption)
// and nesting is capped, so no input makes it use unbounded memory or stack.
// Hand-written rather than a DOM parser: traces are gigabytes and must stream in constant
// memory, with caps and byte offsets a generic parser does not give.
#pragma once

#include <cstdint>
#include <string>

#include "gpuprobe/status.hpp"
#include "readers/byte_source.h"

namespace gpuprobe::readers {

class JsonCursor {
 public:
  explicit JsonCursor(ByteSource& in) : in_(in) {}

  // The next non-whitespace byte, not consumed; -1 at the end.
  int peek();
  // Consumes `c` if it is next (after whitespace).
  bool consume(char c);
  Status expect(char c, const char* what);

  // Reads a string, escapes decoded to UTF-8.
  Status string(std::string* out);
  // Reads a number. `text` keeps its spelling (integers beyond a double's precision stay exact).
  Status number(double* out, std::string* text = nullptr);
  // Reads a number as an integer: exact for integers up to 18 digits, saturated beyond int64's
  // range, truncated when it has a fraction or an exponent.
  Status integer(std::int64_t* out);
  // Reads a number exactly as value × 10^`scale` (readers/exact_decimal.h: µs to ns with scale
  // 3), never through a double. A value that is not a JSON number or is beyond int64 is an error
  // at the number's first byte: "expected <what>, found '<text>'".
  Status scaled(int scale, std::int64_t* out, const char* what);
  // Reads `true` or `false`.
  Status boolean(bool* out);
  // Skips any value, nested ones included.
  Status skip_value();
  // Reads the separator after an element: true when one more follows, false at `close`.
  Status next(char close, bool* more);

  // An error at the current offset: "<file>: byte N: expected <what>".
  Status error(const std::string& what) const;
  // The source's I/O error if it has one, else the same as error().
  Status fail(const std::string& what) const;
  std::uint64_t offset() const { return in_.offset(); }

 private:
  static constexpr std::size_t kMaxString = 1 << 20;
  static constexpr int kMaxDepth = 512;

  Status literal(const char* word);
  Status hex4(std::uint32_t* out);

  ByteSource& in_;
};

}  // namespace gpuprobe::readers
