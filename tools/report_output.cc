#include "tools/report_output.h"

#include "analysis/report_sections.h"

namespace gpuprobe::tools {

void print_report(const analysis::ReportResult& r, const TextOptions& opt, std::FILE* o) {
  for (const analysis::Section& s : analysis::describe_report(r, opt)) analysis::write_text(s, o);
}

}  // namespace gpuprobe::tools
