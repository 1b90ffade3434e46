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

TextFormat TextExposition::negotiate(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos
             ? TextFormat::kOpenMetrics
             : TextFormat::kPrometheus;
}

void TextExposition::family(std::string_view name, std::string_view type, std::string_view help) {
  constexpr std::string_view kTotal = "_total";
  if (format_ == TextFormat::kOpenMetrics && type == "counter" && name.size() > kTotal.size() &&
      name.substr(name.size() - kTotal.size()) == kTotal) {
    name.remove_suffix(kTotal.size());  // the family; its samples keep _total
  }
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

namespace {

// `{first...,then...}`, or nothing when both are empty.
void append_labels(std::string* out, const Labels& first, const Labels& then = {}) {
  if (first.empty() && then.empty()) return;
  *out += '{';
  bool comma = false;
  for (const Labels* list : {&first, &then}) {
    for (const auto& [key, value] : *list) {
      if (comma) *out += ',';
      comma = true;
      *out += key;
      *out += "=\"";
      append_escaped(out, value, true);
      *out += '"';
    }
  }
  *out += '}';
}

}  // namespace

void TextExposition::sample(std::string_view name, const Labels& labels, double value,
                            const Exemplar* exemplar) {
  text_ += name;
  append_labels(&text_, common_, labels);
  text_ += ' ';
  append_value(&text_, value);
  if (exemplar != nullptr && format_ == TextFormat::kOpenMetrics) {
    const std::string tid = std::to_string(exemplar->os_tid);
    text_ += " # ";
    append_labels(&text_, {{"tid", tid}});
    text_ += ' ';
    append_value(&text_, exemplar->value);
    text_ += ' ';
    // Seconds since the epoch, to the microsecond: exact as a decimal, as the format wants.
    const std::int64_t us = exemplar->wall_ns / 1000;
    text_ += std::to_string(us / 1000000);
    text_ += '.';
    const std::string frac = std::to_string(us % 1000000);
    text_.append(6 - frac.size(), '0');
    text_ += frac;
  }
  text_ += '\n';
}

std::string TextExposition::finish() {
  if (format_ == TextFormat::kOpenMetrics) text_ += "# EOF\n";
  return std::move(text_);
}

}  // namespace gpuprobe::metrics
