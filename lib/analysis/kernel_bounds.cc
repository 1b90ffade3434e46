#include "analysis/kernel_bounds.h"

#include <nlohmann/json.hpp>

#include "analysis/kernel_class.h"

#include "absl/strings/str_format.h"

namespace gpuprobe::analysis {

DevicePeaks device_peaks(const std::string& name) {
  // NVIDIA's datasheet figures (SXM parts): FP32 non-tensor TFLOP/s, HBM GB/s, PCIe per direction.
  struct Known {
    const char* part;
    DevicePeaks peaks;
  };
  static const Known kKnown[] = {{"H200", {67, 4800, 64}},   {"H100", {67, 3350, 64}},
                                 {"A100", {19.5, 2039, 32}}, {"L40S", {91.6, 864, 32}},
                                 {"L4", {30.3, 300, 32}},    {"V100", {15.7, 900, 16}}};
  for (const Known& k : kKnown) {
    if (name.find(k.part) != std::string::npos) return k.peaks;
  }
  return {};
}

void KernelBounds::add(const ReportEvent& r) {
  if (r.event->type != EventType::kGpu || r.event->gpu->kind != GpuActivityKind::kMemcpy) return;
  const GpuActivity& a = *r.event->gpu;
  CopyRow& c = copies_[static_cast<int>(a.copy_kind)];
  ++c.copies;
  c.bytes += a.bytes;
  c.ns += r.end_ns - r.begin_ns;
}

void KernelBounds::finish(const TraceContext& trace) {
  KernelBoundsResult& r = result_;
  if (!trace.info->devices.empty()) r.peaks = device_peaks(trace.info->devices.front().name);
  const double ridge =
      r.peaks.memory_gbps > 0 ? r.peaks.fp32_tflops * 1e3 / r.peaks.memory_gbps : 0;
  for (const NameStats* k : names_.result().kernels) {
    const std::string c = kernel_class_from_name(k->name);
    (c == "communication" ? r.communication_class_ns
     : c == "compute"     ? r.compute_class_ns
     : c == "memory"      ? r.memory_class_ns
                          : r.unclassified_ns) += k->total_ns;
    if (k->declared_ns <= 0 || k->declared_bytes <= 0) continue;
    RooflineRow row;
    row.name = k->name;
    const double seconds = static_cast<double>(k->declared_ns) * 1e-9;
    row.intensity = k->declared_flops / k->declared_bytes;
    row.achieved_gbps = k->declared_bytes / seconds * 1e-9;
    row.achieved_tflops = k->declared_flops / seconds * 1e-12;
    if (ridge > 0) {
      row.bound = row.intensity < ridge ? "memory" : "compute";
      row.percent_of_peak = row.bound == "memory" ? 100 * row.achieved_gbps / r.peaks.memory_gbps
                                                  : 100 * row.achieved_tflops / r.peaks.fp32_tflops;
    }
    r.roofline.push_back(row);
  }
  for (auto& [kind, c] : copies_) {
    c.kind = memcpy_kind_name(static_cast<MemcpyKind>(kind));
    c.achieved_gbps = c.ns > 0 ? static_cast<double>(c.bytes) / static_cast<double>(c.ns) : 0;
    const bool host = c.kind == "HtoD" || c.kind == "DtoH";
    c.peak_gbps = host ? r.peaks.host_link_gbps : c.kind == "DtoD" ? r.peaks.memory_gbps : 0;
    r.copies.push_back(c);
  }
}

void KernelBounds::write_json(const TraceContext&, nlohmann::json* report) const {
  using nlohmann::json;
  const KernelBoundsResult& r = result_;
  json& gpu = (*report)["gpu"];
  gpu["kernel_ms"] = ms(names_.result().gpu_kernel_ns);
  gpu["kernel_class_ms"] = {{"communication", ms(r.communication_class_ns)},
                            {"compute", ms(r.compute_class_ns)},
                            {"memory", ms(r.memory_class_ns)},
                            {"unclassified", ms(r.unclassified_ns)}};
  json roofline = json::array();
  for (const RooflineRow& k : r.roofline) {
    roofline.push_back({{"name", k.name},
                        {"flop_per_byte", k.intensity},
                        {"gbps", k.achieved_gbps},
                        {"tflops", k.achieved_tflops},
                        {"bound", k.bound},
                        {"percent_of_peak", k.percent_of_peak}});
  }
  (*report)["roofline"] = roofline;
  json copies = json::array();
  for (const CopyRow& c : r.copies) {
    copies.push_back({{"kind", c.kind},
                      {"copies", c.copies},
                      {"bytes", c.bytes},
                      {"ms", ms(c.ns)},
                      {"gbps", c.achieved_gbps},
                      {"peak_gbps", c.peak_gbps}});
  }
  (*report)["copies"] = copies;
}

Section describe_kernel_classes(const KernelBoundsResult& b, std::int64_t gpu_kernel_ns) {
  Section s("kernel_classes");
  if (gpu_kernel_ns <= 0) return s;
  const auto share = [&](std::int64_t ns) {
    return 100.0 * static_cast<double>(ns) / static_cast<double>(gpu_kernel_ns);
  };
  s.line(0, absl::StrFormat("kernel time by what likely bounds it (from names): compute (GEMM, "
                            "conv, attention) %.1f%%, memory (elementwise, reductions, norms, "
                            "copies) %.1f%%, communication %.1f%%, unclassified %.1f%%",
                            share(b.compute_class_ns), share(b.memory_class_ns),
                            share(b.communication_class_ns), share(b.unclassified_ns)));
  return s;
}

Section describe_roofline(const KernelBoundsResult& b) {
  Section s("roofline");
  if (b.roofline.empty()) return s;
  s.line(0, absl::StrFormat("roofline (kernels with declared bytes and FLOPs%s)",
                            b.peaks.memory_gbps > 0 ? "" : "; device peaks unknown"));
  Table& t = s.table(1, {{"name", 40, true, true},
                         {"FLOP/byte", 12},
                         {"GB/s", 10},
                         {"TFLOP/s", 10},
                         {"bound", 9},
                         {"% peak", 8}});
  for (const RooflineRow& k : b.roofline) {
    t.rows.push_back(
        {{k.name, absl::StrFormat("%.2f", k.intensity), absl::StrFormat("%.1f", k.achieved_gbps),
          absl::StrFormat("%.3f", k.achieved_tflops), k.bound.empty() ? "?" : k.bound,
          absl::StrFormat("%.1f%%", k.percent_of_peak)},
         {}});
  }
  return s;
}

Section describe_copies(const KernelBoundsResult& b) {
  Section s("copies");
  if (b.copies.empty()) return s;
  s.line(0, "copies");
  Table& t = s.table(
      1,
      {{"kind", 8, true}, {"copies", 8}, {"bytes", 14}, {"ms", 10}, {"GB/s", 10}, {"of peak", 10}});
  for (const CopyRow& c : b.copies) {
    t.rows.push_back(
        {{c.kind, absl::StrFormat("%u", c.copies), absl::StrFormat("%u", c.bytes),
          absl::StrFormat("%.3f", ms(c.ns)), absl::StrFormat("%.2f", c.achieved_gbps),
          c.peak_gbps > 0 ? absl::StrFormat("%.1f%%", 100 * c.achieved_gbps / c.peak_gbps) : "-"},
         {}});
  }
  return s;
}

}  // namespace gpuprobe::analysis
