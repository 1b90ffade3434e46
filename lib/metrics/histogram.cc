#include "metrics/histogram.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace gpuprobe::metrics {

void Histogram::add(double seconds, std::int64_t wall_ns, std::int64_t os_tid) {
  const auto edge =
      std::lower_bound(kDurationBuckets.begin(), kDurationBuckets.end(), seconds);  // le: <=
  const auto bucket = static_cast<std::size_t>(edge - kDurationBuckets.begin());
  ++counts[bucket];
  if (wall_ns != 0) exemplars[bucket] = Exemplar{seconds, wall_ns, os_tid};
  sum += seconds;
  ++count;
}

void Histogram::write(TextExposition* out, std::string_view name, Labels labels) const {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  char edge[32];
  labels.emplace_back("le", "");
  for (std::size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    if (i < kDurationBuckets.size()) {
      const auto r = std::to_chars(edge, edge + sizeof edge, kDurationBuckets[i]);
      labels.back().second = std::string_view(edge, static_cast<std::size_t>(r.ptr - edge));
    } else {
      labels.back().second = "+Inf";
    }
    const Exemplar& ex = exemplars[i];
    out->sample(bucket, labels, static_cast<double>(cumulative), ex.wall_ns != 0 ? &ex : nullptr);
  }
  labels.pop_back();
  out->sample(std::string(name) + "_sum", labels, sum);
  out->sample(std::string(name) + "_count", labels, static_cast<double>(count));
}

}  // namespace gpuprobe::metrics
