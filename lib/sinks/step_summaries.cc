#include "sinks/step_summaries.h"

#include <algorithm>
#include <cmath>

namespace gpuprobe::sinks {
namespace {

// An idle GPU sends no records: past this much trace time after a step's end, the step is
// summarized without waiting for GPU records to catch up.
constexpr std::int64_t kGpuPatienceNs = 1000000000;

constexpr int kBucketsPerOctave = 4;

// The bucket of a duration: its upper edge is 2^(index/4) microseconds.
int bucket_index(double ms) {
  const double us = std::max(ms * 1e3, 1e-3);
  return static_cast<int>(std::ceil(std::log2(us) * kBucketsPerOctave - 1e-9));
}

double bucket_edge_ms(int index) {
  return std::exp2(static_cast<double>(index) / kBucketsPerOctave) * 1e-3;
}

// The value at quantile q of sorted `v`, interpolating between neighbours as numpy does.
double quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

RangeSummary summarize_range(std::string name, std::vector<double>& ms) {
  std::sort(ms.begin(), ms.end());
  RangeSummary r;
  r.name = std::move(name);
  r.count = ms.size();
  r.min_ms = ms.front();
  r.max_ms = ms.back();
  for (const double d : ms) {
    r.sum_ms += d;
    r.sum_squares += d * d;
  }
  r.p50_ms = quantile(ms, 0.50);
  r.p90_ms = quantile(ms, 0.90);
  r.p99_ms = quantile(ms, 0.99);
  const int first = bucket_index(ms.front());
  const int last = bucket_index(ms.back());
  r.buckets.reserve(static_cast<std::size_t>(last - first + 2));
  r.buckets.emplace_back(bucket_edge_ms(first - 1), 0.0);
  for (int i = first; i <= last; ++i) r.buckets.emplace_back(bucket_edge_ms(i), 0.0);
  for (const double d : ms)
    r.buckets[static_cast<std::size_t>(bucket_index(d) - first + 1)].second++;
  return r;
}

}  // namespace

StepSummaries::StepSummaries(std::size_t max_samples, std::size_t max_names)
    : max_samples_(max_samples), max_names_(max_names) {}

std::uint32_t StepSummaries::name_index(const CallSite* site) {
  const auto found = site_names_.find(site);
  if (found != site_names_.end()) return found->second;
  std::uint32_t index = UINT32_MAX;  // a name beyond max_names_: not summarized
  const auto named = name_ids_.find(site->name);
  if (named != name_ids_.end()) {
    index = named->second;
  } else if (names_.size() < max_names_) {
    index = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(site->name);
    name_ids_.emplace(site->name, index);
  }
  site_names_.emplace(site, index);
  return index;
}

void StepSummaries::add(const EventBatch& batch) {
  ++batches_;
  const TimeBase& time = *batch.time;
  for (const Event& e : batch) {
    if (e.type == EventType::kGpu) {
      const GpuActivity& a = *e.gpu;
      const bool work = a.kind == GpuActivityKind::kKernel || a.kind == GpuActivityKind::kMemcpy ||
                        a.kind == GpuActivityKind::kMemset;
      if (!work) continue;
      gpu_seen_ = true;
      const std::int64_t start = time.wall_ns(a.start), end = time.wall_ns(a.end);
      gpu_watermark_ = std::max(gpu_watermark_, end);
      first_ns_ = std::min(first_ns_, start);
      if (end <= last_end_ns_) {
        ++late_;
        continue;
      }
      gpu_.push_back({a.device, a.kind == GpuActivityKind::kKernel, start, end});
      continue;
    }
    if (e.type != EventType::kRange) continue;
    const std::int64_t begin = time.wall_ns(e.begin), end = time.wall_ns(e.end);
    cpu_watermark_ = std::max(cpu_watermark_, end);
    first_ns_ = std::min(first_ns_, begin);
    if (e.site->category == Category::kStep) {
      steps_[end] = {static_cast<std::int64_t>(e.value), time.wall_ns(e.begin), batches_};
      continue;
    }
    if (end <= last_end_ns_) {
      ++late_;
      continue;
    }
    const std::uint32_t name = name_index(e.site);
    if (name == UINT32_MAX || samples_.size() >= max_samples_) {
      ++samples_dropped_;
      continue;
    }
    samples_.push_back({name, end, end - begin});
  }
  std::uint64_t dropped = 0;
  for (const ThreadInfo& t : *batch.threads) dropped += t.dropped;
  dropped_total_ = std::max(dropped_total_, dropped);
}

std::vector<StepSummary> StepSummaries::take_ready(bool final) {
  std::vector<StepSummary> ready;
  while (!steps_.empty()) {
    const auto it = steps_.begin();
    const std::int64_t end = it->first;
    const PendingStep step = it->second;
    const bool arrived = step.batch < batches_ && (!gpu_seen_ || gpu_watermark_ >= end ||
                                                   cpu_watermark_ >= end + kGpuPatienceNs);
    if (!final && !arrived) break;
    steps_.erase(it);
    ready.push_back(summarize(step.step, std::max(step.begin_ns, last_end_ns_), end));
  }
  if (final && last_step_ < 0 && (!samples_.empty() || !gpu_.empty())) {
    // No step was ever marked: the whole session is step 0.
    std::int64_t end = cpu_watermark_;
    for (const GpuInterval& g : gpu_) end = std::max(end, g.end_ns);
    ready.push_back(summarize(0, first_ns_, end));
  }
  return ready;
}

StepSummary StepSummaries::summarize(std::int64_t step, std::int64_t begin_ns,
                                     std::int64_t end_ns) {
  StepSummary s;
  s.step = step;
  s.begin_ns = begin_ns;
  s.end_ns = end_ns;
  s.time_ms = static_cast<double>(end_ns - begin_ns) * 1e-6;
  s.dropped = dropped_total_ - dropped_reported_;
  dropped_reported_ = dropped_total_;

  // Ranges that ended within the step, grouped by name; the others wait for a later step.
  std::vector<std::vector<double>> by_name(names_.size());
  std::size_t kept = 0;
  for (const Sample& sample : samples_) {
    if (sample.end_ns <= end_ns) {
      by_name[sample.name].push_back(static_cast<double>(sample.duration_ns) * 1e-6);
    } else {
      samples_[kept++] = sample;
    }
  }
  samples_.resize(kept);
  for (std::size_t i = 0; i < by_name.size(); ++i) {
    if (!by_name[i].empty()) s.ranges.push_back(summarize_range(names_[i], by_name[i]));
  }
  std::sort(s.ranges.begin(), s.ranges.end(),
            [](const RangeSummary& a, const RangeSummary& b) { return a.name < b.name; });

  // Busy time per device: the union of its work clipped to the step.
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> busy;
  std::map<std::uint32_t, std::uint64_t> kernels;
  kept = 0;
  for (const GpuInterval& g : gpu_) {
    const std::int64_t from = std::max(g.start_ns, begin_ns), to = std::min(g.end_ns, end_ns);
    if (from < to) busy[g.device].emplace_back(from, to);
    if (g.kernel && g.start_ns >= begin_ns && g.start_ns < end_ns) kernels[g.device]++;
    if (g.end_ns > end_ns) gpu_[kept++] = g;
    busy.try_emplace(g.device);
  }
  gpu_.resize(kept);
  for (auto& [device, spans] : busy) {
    std::sort(spans.begin(), spans.end());
    std::int64_t covered = 0, reach = begin_ns;
    for (const auto& [from, to] : spans) {
      if (to <= reach) continue;
      covered += to - std::max(from, reach);
      reach = to;
    }
    const double length = static_cast<double>(end_ns - begin_ns);
    s.devices.push_back({device, length > 0 ? 100.0 * static_cast<double>(covered) / length : 0.0,
                         kernels[device]});
  }
  last_end_ns_ = std::max(last_end_ns_, end_ns);
  last_step_ = step;
  return s;
}

}  // namespace gpuprobe::sinks
