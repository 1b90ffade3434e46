#include "analysis/data_loading.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "formats/framework_events.h"
#include "formats/steps.h"

#include "absl/strings/str_format.h"

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

Section describe_data_loading(const DataLoadingResult& d) {
  Section s("data_loading");
  if (d.batches == 0) return s;
  s.line(0, absl::StrFormat("data loading: %u batches, %.3f ms waiting for them (%.0f%% of the %s "
                            "time); per batch P50 %.3f ms, P99 %.3f ms, max %.3f ms",
                            d.batches, ms(d.wait_ns), 100 * d.share,
                            d.steps_ns > 0 ? "steps'" : "trace's", d.p50_ms, d.p99_ms, d.max_ms));
  return s;
}

}  // namespace gpuprobe::analysis
