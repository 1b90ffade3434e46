#include "base/printable_text.h"

#include <cstdint>
#include <cstdio>

namespace gpuprobe::base {
namespace {

// The length of the UTF-8 sequence at `s` (1 to 4), with its code point in `*cp`; 0 when `s`
// does not start a well-formed one (a stray continuation, an overlong form, a surrogate, past
// U+10FFFF, or cut short).
std::size_t decode(std::string_view s, char32_t* cp) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t b0 = byte(0);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  std::size_t n = 0;
  std::uint8_t low = 0x80, high = 0xBF;  // the second byte's range
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) low = 0xA0;   // overlong
    if (b0 == 0xED) high = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) low = 0x90;   // overlong
    if (b0 == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < low || byte(1) > high) return 0;
  char32_t c = b0 & (0xFF >> (n + 1));
  c = (c << 6) | (byte(1) & 0x3F);
  for (std::size_t i = 2; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i) & 0x3F);
  }
  *cp = c;
  return n;
}

// Control characters (C0, DEL, C1), line and paragraph separators, and the invisible marks that
// reorder or hide text on a terminal (bidirectional embeddings, overrides and isolates).
bool is_unprintable(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029 ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x200E ||
         c == 0x200F || c == 0x061C;
}

}  // namespace

std::string printable_text(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  char code[12];
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t n = decode(text.substr(i), &c);
    std::string_view piece = text.substr(i, n);
    if (n == 0) {  // a byte that is not UTF-8
      std::snprintf(code, sizeof code, "\\x%02x",
                    static_cast<unsigned>(static_cast<std::uint8_t>(text[i])));
      piece = code;
    } else if (is_unprintable(c)) {
      if (c < 0x80) {
        std::snprintf(code, sizeof code, "\\x%02x", static_cast<unsigned>(c));
      } else {
        std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
      }
      piece = code;
    }
    if (out.size() + piece.size() > max_bytes) {
      // Cut at a piece's boundary, with room for the mark that says so.
      std::size_t keep = out.size();
      while (keep > 0 && keep + 3 > max_bytes) {
        --keep;
        while (keep > 0 && (static_cast<std::uint8_t>(out[keep]) & 0xC0) == 0x80) --keep;
      }
      out.resize(keep);
      if (keep + 3 <= max_bytes) out += "...";
      return out;
    }
    out.append(piece);
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace gpuprobe::base
