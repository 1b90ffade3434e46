// What bounds the GPU's work: kernels with declared costs on the device's roofline, all kernel
// time split by the class their names suggest (kernel_class.h), and copies against the link's
// peak bandwidth.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/names.h"

namespace gpuprobe::analysis {

// Published peaks of a device, by name: dense FP32 FLOP/s (not tensor cores), memory and
// host-link bandwidth; zeros when the device is not in gpuprobe's table.
struct DevicePeaks {
  double fp32_tflops = 0, memory_gbps = 0, host_link_gbps = 0;
};
DevicePeaks device_peaks(const std::string& device_name);

// Where a kernel with declared bytes and FLOPs sits on the device's roofline.
struct RooflineRow {
  std::string name;
  double intensity = 0;        // FLOP per byte
  double achieved_gbps = 0;    // GB/s
  double achieved_tflops = 0;  // TFLOP/s
  std::string bound;           // "memory" or "compute" (against the ridge point), "" without peaks
  double percent_of_peak = 0;  // of the bound resource's peak
};

// Copies of one direction: bytes, time and achieved bandwidth against the link's peak.
struct CopyRow {
  std::string kind;  // "HtoD", "DtoH", "DtoD", ...
  std::uint64_t copies = 0, bytes = 0;
  std::int64_t ns = 0;
  double achieved_gbps = 0, peak_gbps = 0;  // peak 0: unknown for this device
};

struct KernelBoundsResult {
  DevicePeaks peaks;  // of device 0, when known
  std::vector<RooflineRow> roofline;
  // GPU kernel time by kernel_class_from_name().
  std::int64_t communication_class_ns = 0, compute_class_ns = 0, memory_class_ns = 0,
               unclassified_ns = 0;
  std::vector<CopyRow> copies;
};

// The report's line of kernel time by what likely bounds it (from names), its roofline table
// (kernels with declared bytes and FLOPs) and its copies table; each empty when there is nothing.
Section describe_kernel_classes(const KernelBoundsResult& b, std::int64_t gpu_kernel_ns);
Section describe_roofline(const KernelBoundsResult& b);
Section describe_copies(const KernelBoundsResult& b);

class KernelBounds : public Analysis {
 public:
  explicit KernelBounds(const Names& names) : names_(names) {}

  void add(const ReportEvent& event) override;
  void finish(const TraceContext& trace) override;
  void write_json(const TraceContext& trace, nlohmann::json* report) const override;
  const KernelBoundsResult& result() const { return result_; }

 private:
  const Names& names_;
  std::map<int, CopyRow> copies_;  // by MemcpyKind
  KernelBoundsResult result_;
};

}  // namespace gpuprobe::analysis
