// The two text formats Prometheus scrapes, written by one writer so that the rules live in one
// place: the Prometheus text exposition format 0.0.4, and OpenMetrics 1.0.0 (what Prometheus asks
// for first in its Accept header), which adds exemplars and an end marker and names a counter
// family without its _total suffix. Label values and help text are escaped as both require.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuprobe::metrics {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

enum class TextFormat { kPrometheus, kOpenMetrics };

// A sample's example event (OpenMetrics only): one range that fell into a bucket, so a user
// goes from "P99 rose" to the request that did it — which thread, when.
struct Exemplar {
  double value = 0;          // its duration in seconds
  std::int64_t wall_ns = 0;  // when it ended, ns since the Unix epoch
  std::int64_t os_tid = 0;   // the thread that recorded it
};

class TextExposition {
 public:
  explicit TextExposition(TextFormat format = TextFormat::kPrometheus) : format_(format) {}

  // Labels every later sample carries first, such as the distributed rank.
  void set_common_labels(Labels labels) { common_ = std::move(labels); }

  static constexpr std::string_view kPrometheusContentType =
      "text/plain; version=0.0.4; charset=utf-8";
  static constexpr std::string_view kOpenMetricsContentType =
      "application/openmetrics-text; version=1.0.0; charset=utf-8";
  // The format a scraper's Accept header asks for: OpenMetrics when it names it.
  static TextFormat negotiate(std::string_view accept);
  std::string_view content_type() const noexcept {
    return format_ == TextFormat::kOpenMetrics ? kOpenMetricsContentType : kPrometheusContentType;
  }

  // Starts a family: `type` is counter, gauge or histogram. `name` is the name its samples carry
  // (a counter's ends in _total). Every sample that follows, until the next family, belongs to it.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // One sample: `name` is the family's name or, for histograms, it with _bucket, _sum or _count.
  // `exemplar`, when given, is written in OpenMetrics and left out of the 0.0.4 format.
  void sample(std::string_view name, const Labels& labels, double value,
              const Exemplar* exemplar = nullptr);

  // The text, ended as the format requires ("# EOF" in OpenMetrics).
  std::string finish();

 private:
  TextFormat format_;
  Labels common_;
  std::string text_;
};

}  // namespace gpuprobe::metrics
