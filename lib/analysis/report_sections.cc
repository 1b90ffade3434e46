#include "analysis/report_sections.h"

#include <type_traits>

#include "absl/strings/str_format.h"
#include "analysis/guards.h"
#include "analysis/jax_compile.h"
#include "analysis/report_result.h"
#include "analysis/triton_compile.h"

namespace gpuprobe::analysis {
namespace {

using Describer = Section (*)(const ReportResult&, const TextOptions&);
using Maker = std::unique_ptr<Analysis> (*)(const ReportOptions&);

// One section of the report: how it is described, and for an analysis that stands alone, how
// that analysis is made.
struct Entry {
  Describer describe;
  Maker make = nullptr;
};

template <class T>
std::unique_ptr<T> make(const ReportOptions& options) {
  if constexpr (std::is_constructible_v<T, const ReportOptions&>)
    return std::make_unique<T>(options);
  else
    return std::make_unique<T>();
}

// The entry of an analysis that stands alone: T, an Analysis made from nothing or from the
// report's options, describes its section with `Section describe(const TextOptions&) const`.
template <class T>
constexpr Entry standalone() {
  static_assert(std::is_base_of_v<Analysis, T>);
  return {
      [](const ReportResult& r, const TextOptions& options) {
        if (const T* analysis = r.find<T>()) return analysis->describe(options);
        return make<T>(ReportOptions{})->describe(options);  // nothing to say: its id
      },
      [](const ReportOptions& options) -> std::unique_ptr<Analysis> { return make<T>(options); }};
}

// The report's sections in the order they are printed: each analysis describes its own, from
// its result and what it needs of the others'.
constexpr Entry kSections[] = {
    {describe_summary},
    {[](const ReportResult& r, const TextOptions&) { return describe_eager_fallbacks(r.compile); }},
    {[](const ReportResult& r, const TextOptions& o) { return describe_kernels(r.names, o); }},
    {[](const ReportResult& r, const TextOptions& o) { return describe_ranges(r.names, o); }},
    {[](const ReportResult& r, const TextOptions&) {
      return describe_gpu(r.gpu, r.breakdown, r.names.gpu_kernel_ns);
    }},
    {[](const ReportResult& r, const TextOptions&) {
      return describe_kernel_classes(r.bounds, r.names.gpu_kernel_ns);
    }},
    {[](const ReportResult& r, const TextOptions&) { return describe_roofline(r.bounds); }},
    {[](const ReportResult& r, const TextOptions&) { return describe_copies(r.bounds); }},
    {[](const ReportResult& r, const TextOptions&) { return describe_memsets(r.breakdown); }},
    {[](const ReportResult& r, const TextOptions& o) { return describe_latency(r.latency, o); }},
    {[](const ReportResult& r, const TextOptions&) {
      return describe_torch_compile(r.compile, r.end_ns - r.start_ns);
    }},
    standalone<Guards>(),
    standalone<JaxCompile>(),
    standalone<TritonCompile>(),
    {[](const ReportResult& r, const TextOptions&) { return describe_memory(r.memory); }},
    {[](const ReportResult& r, const TextOptions&) { return describe_data_loading(r.data); }},
    {[](const ReportResult& r, const TextOptions& o) {
      std::vector<std::string> memory;  // what the allocator did within each outlier
      for (const OutlierMemory& m : r.memory.outliers) memory.push_back(describe_outlier_memory(m));
      return describe_jitter(r.jitter, r.start_ns, !r.names.ranges.empty(), memory, o);
    }},
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
  for (const Entry& entry : kSections) ids.push_back(entry.describe(nothing, TextOptions{}).id);
  return ids;
}

std::vector<std::unique_ptr<Analysis>> make_standalone_analyses(const ReportOptions& options) {
  std::vector<std::unique_ptr<Analysis>> analyses;
  for (const Entry& entry : kSections)
    if (entry.make != nullptr) analyses.push_back(entry.make(options));
  return analyses;
}

std::vector<Section> describe_report(const ReportResult& r, const TextOptions& options) {
  std::vector<Section> sections;
  for (const Entry& entry : kSections) {
    Section s = entry.describe(r, options);
    if (!s.empty()) sections.push_back(std::move(s));
  }
  return sections;
}

}  // namespace gpuprobe::analysis
