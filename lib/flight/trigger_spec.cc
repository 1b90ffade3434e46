#include "flight/trigger_spec.h"

#include <csignal>
#include <cstdlib>
#include <string>

#include "base/option_values.h"

namespace gpuprobe::flight {
namespace {

Status bad_trigger(std::string_view item, std::string_view why) {
  return Status::Error(
      "config key 'trigger': '" + std::string(item) + "' " + std::string(why) +
      " (expected slow:NAME>200ms, p99:NAME>50ms/10s, signal[:SIGUSR1], recompile or "
      "recompile>3/60s)");
}

// "99" -> 0.99, "99.9" -> 0.999, "50" -> 0.5: a percentile strictly between 0 and 100.
bool parse_percentile(std::string_view text, double* quantile) {
  if (text.empty() || text.size() > 8 || text.find_first_not_of("0123456789.") != text.npos)
    return false;
  const std::string s(text);
  char* end = nullptr;
  const double p = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(p > 0 && p < 100)) return false;
  *quantile = p / 100;
  return true;
}

bool parse_signal(std::string_view text, int* signal) {
  if (text.substr(0, 3) == "SIG") text.remove_prefix(3);
  if (text == "USR1") return *signal = SIGUSR1, true;
  if (text == "USR2") return *signal = SIGUSR2, true;
  return false;
}

// A trigger's rolling window: a duration from 100 ms to 24 h.
Status parse_window(std::string_view item, std::string_view text, std::int64_t* window_ns) {
  if (!base::parse_duration(text, 0, window_ns) || *window_ns < 100'000'000 ||
      *window_ns > 86'400'000'000'000)
    return bad_trigger(item, "has a window that is not a duration from 100ms to 24h");
  return {};
}

Status parse_one(std::string_view item, TriggerSpec* t) {
  t->text = std::string(item);
  const std::size_t colon = item.find(':');
  const std::string_view kind = item.substr(0, colon);
  if (kind == "signal") {
    t->kind = TriggerSpec::Kind::kSignal;
    t->signal = SIGUSR2;
    if (colon != std::string_view::npos && !parse_signal(item.substr(colon + 1), &t->signal))
      return bad_trigger(item, "names a signal other than SIGUSR1 or SIGUSR2");
    return {};
  }
  if (kind.substr(0, kind.find('>')) == "recompile") {
    t->kind = TriggerSpec::Kind::kRecompile;
    if (item == "recompile") return {};
    // recompile>N/WINDOW: more than N within the window.
    const std::string_view rest = item.substr(sizeof "recompile>" - 1);
    const std::size_t slash = rest.find('/');
    const std::string count(rest.substr(0, slash));
    char* end = nullptr;
    const unsigned long n = std::strtoul(count.c_str(), &end, 10);
    if (item[sizeof "recompile" - 1] != '>' || count.empty() ||
        count.find_first_not_of("0123456789") != std::string::npos || n > 1'000'000 ||
        slash == std::string_view::npos)
      return bad_trigger(item, "is not recompile or recompile>COUNT/WINDOW");
    t->more_than = static_cast<std::uint32_t>(n);
    return parse_window(item, rest.substr(slash + 1), &t->window_ns);
  }
  if (colon == std::string_view::npos) return bad_trigger(item, "has no ':'");
  std::string_view rest = item.substr(colon + 1);
  const std::size_t gt = rest.rfind('>');
  if (gt == std::string_view::npos || gt == 0) return bad_trigger(item, "has no NAME>THRESHOLD");
  t->name = std::string(rest.substr(0, gt));
  std::string_view threshold = rest.substr(gt + 1);
  if (kind == "slow") {
    t->kind = TriggerSpec::Kind::kSlow;
  } else if (kind.size() > 1 && kind.front() == 'p' &&
             parse_percentile(kind.substr(1), &t->quantile)) {
    t->kind = TriggerSpec::Kind::kPercentile;
    const std::size_t slash = threshold.find('/');
    if (slash == std::string_view::npos)
      return bad_trigger(item, "has no rolling window (e.g. >50ms/10s)");
    if (Status s = parse_window(item, threshold.substr(slash + 1), &t->window_ns); !s.ok())
      return s;
    threshold = threshold.substr(0, slash);
  } else {
    return bad_trigger(item, "is of an unknown kind");
  }
  if (!base::parse_duration(threshold, 0, &t->threshold_ns) || t->threshold_ns <= 0)
    return bad_trigger(item, "has a threshold that is not a positive duration with a unit");
  return {};
}

}  // namespace

Status parse_triggers(std::string_view value, std::vector<TriggerSpec>* out) {
  out->clear();
  if (value.empty()) return bad_trigger(value, "is empty");
  while (!value.empty()) {
    const std::size_t plus = value.find('+');
    TriggerSpec t;
    if (Status s = parse_one(value.substr(0, plus), &t); !s.ok()) return s;
    out->push_back(std::move(t));
    value = plus == std::string_view::npos ? std::string_view() : value.substr(plus + 1);
  }
  return {};
}

}  // namespace gpuprobe::flight
