#include "analysis/latency.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"

namespace gpuprobe::analysis {

void Latency::finish(const TraceContext&) {
  for (const NameStats* s : names_.result().ranges) {
    rows_.push_back({s->name, s->count, s->quantile_ns(0.5) * 1e-6, s->quantile_ns(0.9) * 1e-6,
                     s->quantile_ns(0.99) * 1e-6, s->quantile_ns(0.999) * 1e-6, ms(s->max_ns)});
  }
}

void Latency::write_json(const TraceContext&, nlohmann::json* report) const {
  nlohmann::json latency = nlohmann::json::array();
  for (const LatencyRow& l : rows_) {
    latency.push_back({{"name", l.name},
                       {"count", l.count},
                       {"p50_ms", l.p50_ms},
                       {"p90_ms", l.p90_ms},
                       {"p99_ms", l.p99_ms},
                       {"p999_ms", l.p999_ms},
                       {"max_ms", l.max_ms}});
  }
  (*report)["latency"] = latency;
}

Section describe_latency(const std::vector<LatencyRow>& rows, const TextOptions& options) {
  Section s("latency");
  if (rows.empty()) return s;
  s.line(0, "latency by range name");
  Table& t = s.table(1, {{"name", 40, true, true},
                         {"count", 8},
                         {"p50 ms", 10},
                         {"p90 ms", 10},
                         {"p99 ms", 10},
                         {"p99.9 ms", 10},
                         {"max ms", 10}});
  std::size_t n = 0;
  for (const LatencyRow& l : rows) {
    if (n++ == options.limit) break;
    t.rows.push_back({{l.name, absl::StrFormat("%u", l.count), absl::StrFormat("%.4f", l.p50_ms),
                       absl::StrFormat("%.4f", l.p90_ms), absl::StrFormat("%.4f", l.p99_ms),
                       absl::StrFormat("%.4f", l.p999_ms), absl::StrFormat("%.4f", l.max_ms)},
                      {}});
  }
  return s;
}

}  // namespace gpuprobe::analysis
