// The sections of `gpuprobe report`, in the order the terminal prints them: the trace's own
// figures and the verdict, then each analysis's own description (section.h). The text report
// prints them; the JSON carries them as "sections" for the page. A new analysis's section is one
// line in report_sections.cc's list; for an analysis that stands alone that line also makes it
// (standalone<Foo>()).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/report_options.h"
#include "analysis/section.h"

namespace gpuprobe::analysis {

struct ReportResult;  // report_result.h

// The first lines: the trace's span and events, what was lost while recording, and the verdict.
Section describe_summary(const ReportResult& r, const TextOptions& options);

// The ids of the sections, in order, as the JSON's "sections" names them (docs/report.md).
std::vector<std::string> section_ids();

// The analyses that stand alone, made for one report, in their sections' order: each reads the
// events and the trace's own figures only, nothing reads its result but its own JSON keys
// (write_json) and section (its `Section describe(const TextOptions&) const`), and its one line
// in report_sections.cc's list makes it and places its section (docs/CONTRIBUTING.md, recipe 2).
std::vector<std::unique_ptr<Analysis>> make_standalone_analyses(const ReportOptions& options);

// Every section of the report, empty ones left out.
std::vector<Section> describe_report(const ReportResult& r, const TextOptions& options);

}  // namespace gpuprobe::analysis
