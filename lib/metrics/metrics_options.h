// The metrics outputs' options: which range names get a duration histogram. Declared here,
// beside the code that reads them (session_metrics.h); the session layer puts the table together
// with the other layers' and hands the parsed selection to the metrics outputs it creates.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/option_table.h"

namespace gpuprobe::metrics {

// What `metrics_names=` and `metrics_ranges=` choose: which range names get a duration
// histogram.
struct RangeSelection {
  std::size_t max_names = 64;      // the first this many names; later ones are counted
  std::vector<std::string> names;  // only these, when given; others are not exported
};

// metrics_names= and metrics_ranges=.
const base::OptionTable<RangeSelection>& metrics_options();

}  // namespace gpuprobe::metrics
