// The Prometheus text exposition format, version 0.0.4: metric families (HELP and TYPE lines,
// then their samples), label values and help text escaped as the format requires. One writer
// for every metric gpuprobe serves, so that the rules live in one place.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuprobe::metrics {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

class TextExposition {
 public:
  // The Content-Type a scraper is told.
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // Starts a family: `type` is counter, gauge, histogram or summary. Every sample that follows,
  // until the next family, belongs to it.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // One sample: `name` is the family's name or, for histograms, it with _bucket, _sum or _count.
  void sample(std::string_view name, const Labels& labels, double value);

  const std::string& text() const noexcept { return text_; }
  std::string take() noexcept { return std::move(text_); }

 private:
  std::string text_;
};

}  // namespace gpuprobe::metrics
