#include "analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace gpuprobe::analysis {

std::vector<DiffRow> diff_rows(const ReportResult& a, const ReportResult& b) {
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  const auto add = [&](const char* kind, const std::vector<const NameStats*>& names, bool is_b) {
    for (const NameStats* s : names) {
      DiffRow& r = rows[{kind, s->name}];
      r.kind = kind;
      r.name = s->name;
      (is_b ? r.calls_b : r.calls_a) = s->count;
      (is_b ? r.total_b_ms : r.total_a_ms) = ms(s->total_ns);
    }
  };
  add("kernel", a.names.kernels, false);
  add("kernel", b.names.kernels, true);
  add("range", a.names.ranges, false);
  add("range", b.names.ranges, true);
  std::vector<DiffRow> out;
  for (auto& [key, r] : rows) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const DiffRow& x, const DiffRow& y) {
    return std::fabs(x.delta_ms()) > std::fabs(y.delta_ms());
  });
  return out;
}

std::string diff_json(const ReportResult& a, const ReportResult& b) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DiffRow& r : diff_rows(a, b)) {
    rows.push_back({{"kind", r.kind},
                    {"name", r.name},
                    {"calls_a", r.calls_a},
                    {"calls_b", r.calls_b},
                    {"total_a_ms", r.total_a_ms},
                    {"total_b_ms", r.total_b_ms},
                    {"delta_ms", r.delta_ms()}});
  }
  return nlohmann::json{{"schema", "gpuprobe.diff/1"}, {"rows", rows}}.dump(
      1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuprobe::analysis
