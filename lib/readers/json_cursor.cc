#include "readers/json_cursor.h"

#include <climits>
#include <cstdlib>
#include <vector>

#include "readers/exact_decimal.h"

namespace gpuprobe::readers {
namespace {

bool is_space(int c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool is_number_char(int c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

void append_utf8(std::string* out, std::uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

Status JsonCursor::error(const std::string& what) const {
  const int c = in_.peek();
  std::string found = "the end of the file";
  if (c >= 0x20 && c < 0x7F) {
    found = std::string("'") + static_cast<char>(c) + "'";
  } else if (c >= 0) {
    found = "byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
  }
  return in_.error_at(in_.offset(), what + ", found " + found);
}

Status JsonCursor::fail(const std::string& what) const {
  return in_.status().ok() ? error(what) : in_.status();
}

int JsonCursor::peek() {
  for (;;) {
    const std::string_view run = in_.available();
    if (run.empty()) return -1;
    std::size_t i = 0;
    while (i < run.size() && is_space(static_cast<unsigned char>(run[i]))) ++i;
    in_.advance(i);
    if (i < run.size()) return static_cast<unsigned char>(run[i]);
  }
}

Status JsonCursor::integer(std::int64_t* out) {
  // Plain integers (ids, counts) straight from the buffer; anything else through number().
  const int first = peek();
  const std::string_view run = in_.available();
  std::size_t i = first == '-' ? 1 : 0;
  std::int64_t v = 0;
  std::size_t digits = 0;
  while (i < run.size() && run[i] >= '0' && run[i] <= '9' && digits < 18) {
    v = v * 10 + (run[i] - '0');
    ++i;
    ++digits;
  }
  const bool plain = digits > 0 && i < run.size() && !(run[i] >= '0' && run[i] <= '9') &&
                     run[i] != '.' && run[i] != 'e' && run[i] != 'E';
  if (plain) {
    in_.advance(i);
    *out = first == '-' ? -v : v;
    return {};
  }
  double d;
  std::string text;
  if (Status s = number(&d, &text); !s.ok()) return s;
  if (text.find_first_of(".eE") == std::string::npos) {
    *out = std::strtoll(text.c_str(), nullptr, 10);  // saturates on overflow
  } else {
    *out = d != d         ? 0
           : d <= -9.2e18 ? INT64_MIN
           : d >= 9.2e18  ? INT64_MAX
                          : static_cast<std::int64_t>(d);
  }
  return {};
}

bool JsonCursor::consume(char c) {
  if (peek() != static_cast<unsigned char>(c)) return false;
  in_.get();
  return true;
}

Status JsonCursor::expect(char c, const char* what) {
  if (consume(c)) return {};
  return fail(what);
}

Status JsonCursor::next(char close, bool* more) {
  if (consume(',')) {
    *more = true;
    return {};
  }
  if (consume(close)) {
    *more = false;
    return {};
  }
  return fail(close == ']' ? "',' or ']'" : "',' or '}'");
}

Status JsonCursor::hex4(std::uint32_t* out) {
  *out = 0;
  for (int i = 0; i < 4; ++i) {
    const int c = in_.peek();
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return fail("a hex digit of a \\u escape");
    }
    in_.get();
    *out = *out * 16 + static_cast<std::uint32_t>(v);
  }
  return {};
}

Status JsonCursor::string(std::string* out) {
  out->clear();
  if (!consume('"')) return fail("a string");
  for (;;) {
    if (out->size() > kMaxString) return error("a string shorter than 1 MiB");
    // Plain characters in bulk, straight from the buffer, up to a quote, escape or control byte.
    const std::string_view run = in_.available();
    std::size_t plain = 0;
    while (plain < run.size()) {
      const auto ch = static_cast<unsigned char>(run[plain]);
      if (ch == '"' || ch == '\\' || ch < 0x20) break;
      ++plain;
    }
    out->append(run.data(), plain);
    in_.advance(plain);
    if (plain == run.size() && !run.empty()) continue;
    const int c = in_.get();
    if (c < 0) return fail("the end of a string ('\"')");
    if (c == '"') return {};
    if (c < 0x20) return in_.error_at(in_.offset() - 1, "a string character, found a control byte");
    if (c != '\\') {
      out->push_back(static_cast<char>(c));
      continue;
    }
    const int e = in_.get();
    switch (e) {
      case '"':
        out->push_back('"');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '/':
        out->push_back('/');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        std::uint32_t cp;
        if (Status s = hex4(&cp); !s.ok()) return s;
        if (cp >= 0xD800 && cp < 0xDC00 && in_.peek() == '\\') {
          in_.get();
          if (in_.get() != 'u') return fail("a low surrogate escape");
          std::uint32_t low;
          if (Status s = hex4(&low); !s.ok()) return s;
          if (low >= 0xDC00 && low < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xD800 && cp < 0xE000) {
          cp = 0xFFFD;  // an unpaired surrogate
        }
        append_utf8(out, cp);
        break;
      }
      default:
        return fail("an escape character after '\\'");
    }
  }
}

Status JsonCursor::number(double* out, std::string* text) {
  // Most numbers in traces are plain decimals ("1234.567"): converted exactly without strtod
  // when they have at most 15 significant digits (the mantissa and the power of ten are exact
  // doubles, so one division rounds as strtod would).
  static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  if (text == nullptr) {
    const std::string_view run = in_.available();
    std::size_t i = 0;
    const bool negative = i < run.size() && run[i] == '-';
    if (negative) ++i;
    std::int64_t mantissa = 0;
    int digits = 0, fraction = -1;
    for (; i < run.size(); ++i) {
      const char ch = run[i];
      if (ch >= '0' && ch <= '9') {
        if (digits < 18) mantissa = mantissa * 10 + (ch - '0');  // more digits: strtod below
        ++digits;
        if (fraction >= 0) ++fraction;
      } else if (ch == '.' && fraction < 0) {
        fraction = 0;
      } else {
        break;
      }
    }
    const bool ends_here = i < run.size() && run[i] != 'e' && run[i] != 'E';
    if (ends_here && digits > 0 && digits <= 15 && fraction != 0 && run[negative ? 1 : 0] != '.') {
      const double v = static_cast<double>(mantissa) / kPow10[fraction < 0 ? 0 : fraction];
      *out = negative ? -v : v;
      in_.advance(i);
      return {};
    }
  }
  char buf[64];
  std::size_t n = 0;
  int c = peek();
  while ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
    if (n + 1 >= sizeof buf) return error("a number of at most 63 characters");
    buf[n++] = static_cast<char>(c);
    in_.get();
    c = in_.peek();
  }
  buf[n] = '\0';
  char* end = nullptr;
  *out = n == 0 ? 0 : std::strtod(buf, &end);
  if (n == 0 || end != buf + n) {
    return in_.error_at(in_.offset() - n, "a number, found '" + std::string(buf, n) + "'");
  }
  if (text != nullptr) text->assign(buf, n);
  return {};
}

Status JsonCursor::scaled(int scale, std::int64_t* out, const char* what) {
  peek();  // past whitespace, so the offset is the number's
  const std::uint64_t at = in_.offset();
  // The number's text straight from the buffer when it ends there (nearly always), else copied.
  std::string_view text = in_.available();
  std::size_t n = 0;
  while (n < text.size() && is_number_char(static_cast<unsigned char>(text[n]))) ++n;
  char buf[64];
  if (n < text.size()) {
    text = text.substr(0, n);
    in_.advance(n);
  } else {
    n = 0;
    for (int c = in_.peek(); is_number_char(c); c = in_.peek()) {
      if (n + 1 >= sizeof buf) return error("a number of at most 63 characters");
      buf[n++] = static_cast<char>(c);
      in_.get();
    }
    text = std::string_view(buf, n);
  }
  if (decimal_to_scaled(text, scale, out)) return {};
  if (n == 0) return fail(what);
  return in_.error_at(at, std::string(what) + ", found '" + std::string(text) + "'");
}

Status JsonCursor::literal(const char* word) {
  for (const char* p = word; *p != '\0'; ++p) {
    if (in_.peek() != static_cast<unsigned char>(*p)) return fail(std::string("'") + word + "'");
    in_.get();
  }
  return {};
}

Status JsonCursor::boolean(bool* out) {
  const int c = peek();
  if (c != 't' && c != 'f') return error("true or false");
  *out = c == 't';
  return literal(*out ? "true" : "false");
}

Status JsonCursor::skip_value() {
  // Iterative, with an explicit stack of the containers open, so depth costs no call stack.
  std::vector<char> open;
  std::string scratch;
  for (;;) {
    const int c = peek();
    Status s;
    if (c == '{' || c == '[') {
      if (open.size() >= kMaxDepth) return error("nesting of at most 512 levels");
      in_.get();
      const char close = c == '{' ? '}' : ']';
      if (!consume(close)) {
        open.push_back(close);
        if (close == '}' && (!(s = string(&scratch)).ok() || !(s = expect(':', "':'")).ok()))
          return s;
        continue;  // the container's first value
      }
    } else if (c == '"') {
      s = string(&scratch);
    } else if (c == 't') {
      s = literal("true");
    } else if (c == 'f') {
      s = literal("false");
    } else if (c == 'n') {
      s = literal("null");
    } else {
      double unused;
      s = number(&unused);
    }
    if (!s.ok()) return s;
    // After a value: close finished containers, or move to the next element.
    for (;;) {
      if (open.empty()) return {};
      bool more;
      if (!(s = next(open.back(), &more)).ok()) return s;
      if (!more) {
        open.pop_back();
        continue;
      }
      if (open.back() == '}') {
        if (!(s = string(&scratch)).ok() || !(s = expect(':', "':'")).ok()) return s;
      }
      break;
    }
  }
}

}  // namespace gpuprobe::readers
