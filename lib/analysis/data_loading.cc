#include "analysis/data_loading.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "formats/framework_events.h"
#include "formats/steps.h"

namespace gpuprobe::analysis {

void DataLoading::finish(const TraceContext& trace) {
  const NameStats* wait = names_.range(formats::framework_events::kDataWait);
  if (wait == nullptr || wait->count == 0) return;
  DataLoadingResult& r = result_;
  r.batches = wait->count;
  r.wait_ns = wait->total_ns;
  r.p50_ms = wait->quantile_ns(0.5) * 1e-6;
  r.p99_ms = wait->quantile_ns(0.99) * 1e-6;
  r.max_ms = static_cast<double>(wait->max_ns) * 1e-6;
  const NameStats* steps = names_.range(formats::kStepName);
  r.steps_ns = steps != nullptr ? steps->total_ns : 0;
  const double of = r.steps_ns > 0 ? static_cast<double>(r.steps_ns) : trace.span_ns();
  r.share = std::min(static_cast<double>(r.wait_ns) / of, 1.0);
}

void DataLoading::write_json(const TraceContext&, nlohmann::json* report) const {
  const DataLoadingResult& r = result_;
  (*report)["data_loading"] = {{"batches", r.batches}, {"wait_ms", ms(r.wait_ns)},
                               {"p50_ms", r.p50_ms},   {"p99_ms", r.p99_ms},
                               {"max_ms", r.max_ms},   {"steps_ms", ms(r.steps_ns)},
                               {"share", r.share}};
}

}  // namespace gpuprobe::analysis
