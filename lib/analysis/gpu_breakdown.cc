#include "analysis/gpu_breakdown.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/kernel_class.h"

#include "absl/strings/str_format.h"

namespace gpuprobe::analysis {

namespace {

std::int64_t total(const std::vector<Interval>& merged) {
  std::int64_t sum = 0;
  for (const Interval& i : merged) sum += i.end - i.begin;
  return sum;
}

// The length of the intersection of two merged, sorted interval lists.
std::int64_t intersection(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t sum = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t begin = std::max(a[i].begin, b[j].begin);
    const std::int64_t end = std::min(a[i].end, b[j].end);
    if (end > begin) sum += end - begin;
    (a[i].end < b[j].end ? i : j) += 1;
  }
  return sum;
}

}  // namespace

bool GpuBreakdown::communication(const ReportEvent& r) {
  if (r.row == nullptr) return kernel_class_from_name(r.event->gpu->name) == "communication";
  const auto [it, added] = communication_rows_.try_emplace(r.row, false);
  if (added) it->second = kernel_class_from_name(r.event->gpu->name) == "communication";
  return it->second;
}

void GpuBreakdown::add(const ReportEvent& r) {
  if (r.event->type != EventType::kGpu) return;
  const GpuActivity& a = *r.event->gpu;
  if (a.kind != GpuActivityKind::kKernel && a.kind != GpuActivityKind::kMemcpy &&
      a.kind != GpuActivityKind::kMemset)
    return;
  Device& d = devices_[a.device];
  const Interval work{r.begin_ns, r.end_ns};
  d.work.push_back(work);
  if (a.kind == GpuActivityKind::kKernel) {
    (communication(r) ? d.communication : d.compute).push_back(work);
  } else if (a.kind == GpuActivityKind::kMemcpy) {
    ++d.figures.copies;
    d.figures.copy_ns += r.end_ns - r.begin_ns;
  } else {
    ++d.figures.memsets;
    d.figures.memset_bytes += a.bytes;
    d.figures.memset_ns += r.end_ns - r.begin_ns;
  }
}

void GpuBreakdown::finish(const TraceContext&) {
  for (auto& [device, d] : devices_) {
    DeviceBreakdown& f = d.figures;
    f.device = device;
    merge(d.work);
    merge(d.compute);
    merge(d.communication);
    f.first_ns = d.work.front().begin;
    f.last_ns = d.work.back().end;
    f.busy_ns = total(d.work);
    f.compute_ns = total(d.compute);
    f.communication_ns = total(d.communication);
    f.overlap_ns = intersection(d.communication, d.compute);
    result_.devices.push_back(f);
    d = Device{};  // the intervals are no longer needed
  }
}

void GpuBreakdown::write_json(const TraceContext&, nlohmann::json* report) const {
  using nlohmann::json;
  json devices = json::object();
  json memsets = json::array();
  for (const DeviceBreakdown& d : result_.devices) {
    json row = {{"active_span_ms", ms(d.span_ns())},
                {"busy_ms", ms(d.busy_ns)},
                {"idle_ms", ms(d.idle_ns())},
                {"compute_ms", ms(d.compute_ns)},
                {"non_compute_ms", ms(d.non_compute_ns())},
                {"idle_percent_of_span", d.percent_of_span(d.idle_ns())},
                {"compute_percent_of_span", d.percent_of_span(d.compute_ns)},
                {"non_compute_percent_of_span", d.percent_of_span(d.non_compute_ns())},
                {"communication_ms", ms(d.communication_ns)},
                {"memory_ms", ms(d.memory_ns())}};
    // No communication kernels: no overlap figure (null), rather than a 0 that reads as none.
    row["comm_compute_overlap_percent"] =
        d.communication_ns > 0 ? json(d.overlap_percent()) : json(nullptr);
    devices[std::to_string(d.device)] = row;
    if (d.memsets > 0) {
      memsets.push_back({{"device", d.device},
                         {"sets", d.memsets},
                         {"bytes", d.memset_bytes},
                         {"ms", ms(d.memset_ns)}});
    }
  }
  (*report)["gpu"]["breakdown"] = devices;
  (*report)["memsets"] = memsets;
}

void describe_breakdown(const GpuBreakdownResult& b, Section* s) {
  for (const DeviceBreakdown& d : b.devices) {
    s->line(
        1, absl::StrFormat("GPU %u: active span %.3f ms (first to last GPU work): idle %.1f%%, "
                           "compute %.1f%%, non-compute (communication, copies, sets) %.1f%%",
                           d.device, ms(d.span_ns()), d.percent_of_span(d.idle_ns()),
                           d.percent_of_span(d.compute_ns), d.percent_of_span(d.non_compute_ns())));
    if (d.communication_ns > 0) {
      s->line(1, absl::StrFormat("GPU %u: communication-computation overlap %.1f%% of %.3f ms of "
                                 "communication kernels",
                                 d.device, d.overlap_percent(), ms(d.communication_ns)));
    } else {
      s->line(1, absl::StrFormat("GPU %u: no communication kernels (no overlap figure)", d.device));
    }
  }
}

Section describe_memsets(const GpuBreakdownResult& b) {
  Section s("memsets");
  bool any = false;
  for (const DeviceBreakdown& d : b.devices) any = any || d.memsets > 0;
  if (!any) return s;
  s.line(0, "memsets");
  Table& t = s.table(
      1,
      {{"device", 8, true}, {"sets", 8}, {"bytes", 14}, {"ms", 10}, {"memory ms (+copies)", 18}});
  for (const DeviceBreakdown& d : b.devices) {
    if (d.memsets == 0) continue;
    t.rows.push_back(
        {{absl::StrFormat("GPU %u", d.device), absl::StrFormat("%u", d.memsets),
          absl::StrFormat("%u", d.memset_bytes), absl::StrFormat("%.3f", ms(d.memset_ns)),
          absl::StrFormat("%.3f", ms(d.memory_ns()))},
         {}});
  }
  return s;
}

}  // namespace gpuprobe::analysis
