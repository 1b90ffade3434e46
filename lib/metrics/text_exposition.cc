#include "metrics/text_exposition.h"

#include <charconv>
#include <cmath>

namespace gpuprobe::metrics {
namespace {

// Label values escape backslash, double quote and newline; help text backslash and newline.
void append_escaped(std::string* out, std::string_view s, bool quote) {
  for (const char c : s) {
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (quote && c == '"') {
      *out += "\\\"";
    } else {
      *out += c;
    }
  }
}

void append_value(std::string* out, double v) {
  if (std::isnan(v)) {
    *out += "NaN";
  } else if (std::isinf(v)) {
    *out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);  // the shortest exact form
    out->append(buf, r.ptr);
  }
}

}  // namespace

void TextExposition::family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(&text_, help, false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void TextExposition::sample(std::string_view name, const Labels& labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i != 0) text_ += ',';
      text_ += labels[i].first;
      text_ += "=\"";
      append_escaped(&text_, labels[i].second, true);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  append_value(&text_, value);
  text_ += '\n';
}

}  // namespace gpuprobe::metrics
