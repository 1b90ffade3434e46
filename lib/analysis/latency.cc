#include "analysis/latency.h"

#include <nlohmann/json.hpp>

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

}  // namespace gpuprobe::analysis
