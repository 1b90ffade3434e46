#include "metrics/metrics_options.h"

#include <iterator>
#include <string>
#include <string_view>

#include "base/option_values.h"

namespace gpuprobe::metrics {
namespace {

using Options = RangeSelection;

Status apply_metrics_names(std::string_view v, Options& c) {
  if (!base::parse_int<std::size_t>(v, 1, 4096, &c.max_names)) {
    return base::bad_value("metrics_names", v, "a number of names from 1 to 4096");
  }
  return {};
}

Status apply_metrics_ranges(std::string_view v, Options& c) {
  c.names.clear();
  for (const std::string_view name : base::plus_items(v)) {
    if (!name.empty()) c.names.emplace_back(name);
  }
  if (c.names.empty()) return base::bad_value("metrics_ranges", v, "a list of range names");
  return {};
}

constexpr base::OptionSpec<Options> kOptions[] = {
    {"metrics_names", "N", [](const Options& c) { return std::to_string(c.max_names); },
     "range names that get a duration histogram in metrics= and metrics_file= (the first N "
     "seen); the ranges of later names are counted in gpuprobe_range_names_overflowed_total",
     apply_metrics_names},
    {"metrics_ranges", "NAME+NAME...", [](const Options&) { return std::string(); },
     "export only these range names in the metrics (e.g. request+decode); others are left out",
     apply_metrics_ranges},
};

}  // namespace

const base::OptionTable<RangeSelection>& metrics_options() {
  static constexpr base::OptionTable<RangeSelection> kTable{kOptions, std::size(kOptions)};
  return kTable;
}

}  // namespace gpuprobe::metrics
