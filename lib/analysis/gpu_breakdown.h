// Each device's time over its active span (its first GPU work's start to its last one's end), as
// Holistic Trace Analysis's temporal breakdown and communication analysis see it: idle (no GPU
// work at all), compute (kernels that are not communication), non-compute (communication
// kernels, copies and sets where no compute kernel runs), the share of communication time that
// overlaps compute, and the sets (memsets) beside the copies, which are memory time too.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/intervals.h"

namespace gpuprobe::analysis {

// One device's breakdown. Times are of unions (work on several streams at once counts once),
// except copy_ns and memset_ns, the sums of their durations (as the copies table and HTA's
// memory rows add them).
struct DeviceBreakdown {
  std::uint32_t device = 0;
  std::int64_t first_ns = 0, last_ns = 0;  // the active span
  std::int64_t busy_ns = 0;                // kernels, copies and sets
  std::int64_t compute_ns = 0;             // kernels not named as communication
  std::int64_t communication_ns = 0;       // kernels named as communication (kernel_class.h)
  std::int64_t overlap_ns = 0;             // communication while a compute kernel runs
  std::uint64_t copies = 0, memsets = 0, memset_bytes = 0;
  std::int64_t copy_ns = 0, memset_ns = 0;

  std::int64_t span_ns() const { return last_ns - first_ns; }
  std::int64_t idle_ns() const { return span_ns() - busy_ns; }
  std::int64_t non_compute_ns() const { return busy_ns - compute_ns; }
  // Copies and sets: the device's memory time.
  std::int64_t memory_ns() const { return copy_ns + memset_ns; }
  // A share of the active span, in percent (0 for an empty span).
  double percent_of_span(std::int64_t ns) const {
    return span_ns() > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(span_ns()) : 0;
  }
  // The share of communication time that overlaps compute, in percent; -1 without
  // communication kernels (no figure, rather than 0).
  double overlap_percent() const {
    return communication_ns > 0
               ? 100.0 * static_cast<double>(overlap_ns) / static_cast<double>(communication_ns)
               : -1;
  }
};

struct GpuBreakdownResult {
  std::vector<DeviceBreakdown> devices;  // by device number
};

// Each device's active span (first to last GPU work): idle, compute and non-compute shares as
// HTA's temporal breakdown, and the communication that overlaps compute; lines of the report's
// "GPU utilisation" section (describe_gpu).
void describe_breakdown(const GpuBreakdownResult& b, Section* section);
// The report's "memsets" table: sets per device, beside the copies (memory time is copies and
// sets); empty without sets.
Section describe_memsets(const GpuBreakdownResult& b);

class GpuBreakdown : public Analysis {
 public:
  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const GpuBreakdownResult& result() const { return result_; }

 private:
  struct Device {
    std::vector<Interval> work, compute, communication;
    DeviceBreakdown figures;
  };
  // Whether a kernel's name is communication, once per name row.
  bool communication(const ReportEvent& event);

  std::map<std::uint32_t, Device> devices_;
  std::unordered_map<const void*, bool> communication_rows_;
  GpuBreakdownResult result_;
};

}  // namespace gpuprobe::analysis
