#include "analysis/report_sections.h"

#include "absl/strings/str_format.h"
#include "analysis/trace_report.h"

namespace gpuprobe::analysis {
namespace {

using Describer = Section (*)(const ReportResult&, const TextOptions&);

// The report's sections in the order they are printed; each analysis describes its own.
constexpr Describer kSections[] = {
    describe_summary,
    describe_eager_fallbacks,
    describe_kernels,
    describe_ranges,
    describe_gpu,
    describe_kernel_classes,
    describe_roofline,
    describe_copies,
    describe_memsets,
    describe_latency,
    describe_torch_compile,
    describe_jax_compile,
    describe_triton_compile,
    describe_memory,
    describe_data_loading,
    describe_jitter,
};

}  // namespace

Section describe_summary(const ReportResult& r, const TextOptions&) {
  Section s("summary", false);
  std::string head =
      absl::StrFormat("trace: %.3f ms, %u events", ms(r.end_ns - r.start_ns), r.events);
  if (r.dropped + r.gpu_dropped != 0) {
    absl::StrAppendFormat(&head, " (dropped while recording: %u events, %u GPU records)", r.dropped,
                          r.gpu_dropped);
  }
  if (r.names_overflowed != 0)
    absl::StrAppendFormat(&head, " (%u names past a cap, shown as \"<...>\")", r.names_overflowed);
  s.line(0, std::move(head));
  s.line(0, "verdict: " + r.verdict);
  return s;
}

std::vector<std::string> section_ids() {
  // A describer names its section whether or not it has anything to say: ask each of nothing.
  const ReportResult nothing;
  std::vector<std::string> ids;
  for (const Describer describe : kSections) ids.push_back(describe(nothing, TextOptions{}).id);
  return ids;
}

std::vector<Section> describe_report(const ReportResult& r, const TextOptions& options) {
  std::vector<Section> sections;
  for (const Describer describe : kSections) {
    Section s = describe(r, options);
    if (!s.empty()) sections.push_back(std::move(s));
  }
  return sections;
}

}  // namespace gpuprobe::analysis
