#include "sinks/json_writer.h"

#include <charconv>
#include <cmath>

namespace gpuprobe::sinks {
namespace {

// The length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one (overlong
// forms, surrogates and code points above U+10FFFF are invalid too).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void append_json_string(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run that needs no escaping in one append.
    std::size_t run = i;
    while (run < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out->append(s.data() + i, run - i);
    i = run;
    if (i == s.size()) break;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        ++i;
      } else {
        out->append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default: {
        const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out->append(esc, sizeof esc);
      }
    }
    ++i;
  }
  out->push_back('"');
}

void append_int(std::string* out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<std::size_t>(r.ptr - buf));
}

void append_int_members(std::string* out,
                        std::initializer_list<std::pair<const char*, std::int64_t>> members) {
  for (const auto& [name, value] : members) {
    out->append(", \"");
    out->append(name);
    out->append("\": ");
    append_int(out, value);
  }
}

void append_micros(std::string* out, std::int64_t ns) {
  // Negated in unsigned arithmetic, so INT64_MIN does not overflow.
  const std::uint64_t mag =
      ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  if (ns < 0) out->push_back('-');
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, mag / 1000);
  out->append(buf, static_cast<std::size_t>(r.ptr - buf));
  const unsigned frac = static_cast<unsigned>(mag % 1000);
  const char f[] = {'.', static_cast<char>('0' + frac / 100),
                    static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  out->append(f, sizeof f);
}

void append_double(std::string* out, double v) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace gpuprobe::sinks
