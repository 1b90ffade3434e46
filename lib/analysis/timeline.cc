#include "analysis/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "analysis/name_stats.h"
#include "formats/framework_events.h"

namespace gpuprobe::analysis {
namespace {

// The q quantile of `v` (reordered), as the nearest rank.
double quantile_ms(std::vector<std::int64_t>& v, double q) {
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return ms(v[k]);
}

// At most `cap` of `v`: the longest, back in time order.
std::uint64_t keep_longest(std::vector<Interval>& v, std::size_t cap) {
  if (v.size() <= cap) return 0;
  const std::uint64_t left_out = v.size() - cap;
  std::nth_element(
      v.begin(), v.begin() + static_cast<std::ptrdiff_t>(cap), v.end(),
      [](const Interval& a, const Interval& b) { return a.end - a.begin > b.end - b.begin; });
  v.resize(cap);
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  return left_out;
}

void by_begin(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
}

// P50 and P99 at kRollingSamples times across the trace, each over the instances of `points`
// (by begin) that began in the `window` before it; none where the window holds no instance.
std::vector<RollingSample> rolling_quantiles(const std::vector<Interval>& points,
                                             std::int64_t window, const TraceContext& trace) {
  std::vector<RollingSample> out;
  std::vector<std::int64_t> durations;
  std::size_t from = 0, to = 0;
  for (int k = 1; k <= Timeline::kRollingSamples; ++k) {
    const std::int64_t at =
        trace.start_ns + static_cast<std::int64_t>(trace.span_ns() * k / Timeline::kRollingSamples);
    while (to < points.size() && points[to].begin <= at) ++to;
    while (from < to && points[from].begin <= at - window) ++from;
    if (from == to) continue;
    durations.clear();
    for (std::size_t i = from; i < to; ++i) durations.push_back(points[i].end - points[i].begin);
    const double p99 = quantile_ms(durations, 0.99);
    out.push_back({at, quantile_ms(durations, 0.5), p99});
  }
  return out;
}

}  // namespace

void Timeline::Series::thin() {
  std::size_t out = 0;
  for (std::size_t i = 0; i < kept.size(); i += 2) kept[out++] = kept[i];
  kept.resize(out);
  stride *= 2;
}

void Timeline::add(const ReportEvent& r) {
  const Event& e = *r.event;
  if (e.type == EventType::kInstant &&
      std::strncmp(e.site->name, formats::framework_events::kGraphBreak,
                   sizeof formats::framework_events::kGraphBreak - 1) == 0) {
    graph_breaks_.push_back({r.begin_ns, r.begin_ns});
    return;
  }
  if (e.type != EventType::kRange || r.row == nullptr) return;
  Series& s = series_[r.row];
  // Instance k is kept when k is a multiple of the stride: thinning keeps exactly those.
  if (s.seen++ % s.stride != 0) return;
  s.kept.push_back({r.begin_ns, r.end_ns});
  ++points_;
  if (s.kept.size() > kPointsPerName) {
    points_ -= s.kept.size();
    s.thin();
    points_ += s.kept.size();
  }
  if (points_ > kPointsInAll) {  // the largest series gives way
    Series* largest = &s;
    for (auto& [row, other] : series_) {
      if (other.kept.size() > largest->kept.size()) largest = &other;
    }
    points_ -= largest->kept.size();
    largest->thin();
    points_ += largest->kept.size();
  }
}

void Timeline::finish(const TraceContext& trace) {
  TimelineResult& r = result_;
  for (int c = 0; c < Jitter::kCauses; ++c) {
    std::vector<Interval> events = jitter_.causes(c);
    if (events.empty()) continue;
    r.marks_left_out += keep_longest(events, kMarksPerKind);
    r.marks[Jitter::cause_name(c)] = std::move(events);
  }
  if (!graph_breaks_.empty()) {
    std::sort(graph_breaks_.begin(), graph_breaks_.end(),
              [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    if (graph_breaks_.size() > kMarksPerKind) {  // all of equal length: keep them evenly
      r.marks_left_out += graph_breaks_.size() - kMarksPerKind;
      std::vector<Interval> even;
      for (std::size_t i = 0; i < kMarksPerKind; ++i)
        even.push_back(graph_breaks_[i * graph_breaks_.size() / kMarksPerKind]);
      graph_breaks_.swap(even);
    }
    r.marks["graph break"] = std::move(graph_breaks_);
  }
  const NameStats* target = jitter_.target();
  const auto it = target != nullptr ? series_.find(target) : series_.end();
  if (it == series_.end()) return;
  r.latency_name = target->name;
  r.instances = it->second.seen;
  r.stride = it->second.stride;
  r.points = std::move(it->second.kept);
  r.p50_ms = target->quantile_ns(0.5) * 1e-6;
  by_begin(r.points);
  // Rolling quantiles over a fiftieth of the trace, sampled more finely than the window so
  // that the lines are smooth; a window with no instance has no sample.
  r.window_ns = std::max<std::int64_t>(static_cast<std::int64_t>(trace.span_ns() / 50), 1);
  r.rolling_every_ns =
      std::max<std::int64_t>(static_cast<std::int64_t>(trace.span_ns() / kRollingSamples), 1);
  r.rolling = rolling_quantiles(r.points, r.window_ns, trace);
  // The chooser's other ranges: the heaviest repeated ones, each thinned to kChoicePoints.
  for (const NameStats* s : names_.result().ranges) {
    if (r.others.size() == kChoices) break;
    const auto other = series_.find(s);
    if (s == target || s->count < kRepeats || other == series_.end()) continue;
    Series& series = other->second;
    while (series.kept.size() > kChoicePoints) series.thin();
    RangeOverTime o;
    o.name = s->name;
    o.instances = series.seen;
    o.stride = series.stride;
    o.points = std::move(series.kept);
    by_begin(o.points);
    o.rolling = rolling_quantiles(o.points, r.window_ns, trace);
    o.p50_ms = s->quantile_ns(0.5) * 1e-6;
    o.outliers = range_outliers(names_, *s, jitter_, trace);
    r.others.push_back(std::move(o));
  }
  series_.clear();
}

void Timeline::write_json(const TraceContext& trace, nlohmann::json* report) const {
  using nlohmann::json;
  const TimelineResult& r = result_;
  // Compact rows of [start_ms, duration_ms]: a page holds hundreds of thousands of them.
  const auto rows = [&](const std::vector<Interval>& v) {
    json a = json::array();
    for (const Interval& i : v) a.push_back({ms(i.begin - trace.start_ns), ms(i.end - i.begin)});
    return a;
  };
  const auto rolling = [&](const std::vector<RollingSample>& v) {
    json a = json::array();
    for (const auto& s : v) a.push_back({ms(s.at_ns - trace.start_ns), s.p50_ms, s.p99_ms});
    return a;
  };
  json others = json::array();
  for (const RangeOverTime& o : r.others) {
    others.push_back({{"range", o.name},
                      {"instances", o.instances},
                      {"one_in", o.stride},
                      {"points", rows(o.points)},
                      {"rolling", rolling(o.rolling)},
                      {"p50_ms", o.p50_ms},
                      {"threshold_ms", o.outliers.threshold_ms},
                      {"outliers", outliers_json(o.outliers.outliers, trace)}});
  }
  json marks = json::object();
  for (const auto& [kind, events] : r.marks) marks[kind] = rows(events);
  (*report)["timeline"] = {{"range", r.latency_name},
                           {"instances", r.instances},
                           {"one_in", r.stride},
                           {"points", rows(r.points)},
                           {"p50_ms", r.p50_ms},
                           {"window_ms", ms(r.window_ns)},
                           {"rolling_every_ms", ms(r.rolling_every_ns)},
                           {"rolling", rolling(r.rolling)},
                           {"marks", marks},
                           {"marks_left_out", r.marks_left_out},
                           {"others", others}};
}

}  // namespace gpuprobe::analysis
