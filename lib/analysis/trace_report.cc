#include "analysis/trace_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/report_sections.h"
#include "analysis/verdict.h"

namespace gpuprobe::analysis {

TraceReport::TraceReport(ReportOptions options)
    : options_(std::move(options)),
      names_(options_.keep_slowest, options_.outliers_from_ns, options_.outliers_to_ns),
      gpu_({options_.tiny_kernel_ns, options_.consecutive_kernel_ns,
            options_.timeline ? Timeline::kGpuBins : 0}),
      bounds_(names_),
      latency_(names_),
      jitter_({options_.latency_name, options_.outlier_threshold_ms, options_.large_copy_bytes},
              names_, gpu_, cpu_),
      data_(names_),
      memory_(jitter_, options_.timeline ? Timeline::kMemoryPoints : 0),
      timeline_(jitter_, names_) {
  if (options_.timeline) analyses_.push_back(&timeline_);
  standalone_ = make_standalone_analyses(options_);
  for (const std::unique_ptr<Analysis>& analysis : standalone_) analyses_.push_back(analysis.get());
}

Status TraceReport::open(const TraceInfo& info) {
  info_ = info;
  return {};
}

Status TraceReport::write(const EventBatch& batch) {
  const TimeBase& time = *batch.time;
  for (const Event& e : batch) {
    const std::int64_t begin = time.wall_ns(e.begin), end = time.wall_ns(e.end);
    if (begin < options_.window_begin_ns || begin >= options_.window_end_ns) continue;
    ++events_;
    first_ns_ = std::min(first_ns_, begin);
    last_ns_ = std::max(last_ns_, end);
    const ReportEvent event{&e, begin, end, names_.row(e)};
    for (Analysis* analysis : analyses_) analysis->add(event);
  }
  return {};
}

Status TraceReport::close(const Stats& stats, const TimeBase&) {
  stats_ = stats;
  context_.events = events_;
  context_.start_ns = events_ != 0 ? first_ns_ : 0;
  context_.end_ns = events_ != 0 ? last_ns_ : 0;
  context_.info = &info_;
  context_.stats = &stats_;
  context_.names = &names_;
  // In this order: each reads the results of those before it.
  for (Analysis* analysis : analyses_) {
    analysis->finish(context_);
    if (analysis == &jitter_) context_.latency_name = jitter_.result().latency_name;
  }
  ReportResult& r = result_;
  r.start_ns = context_.start_ns;
  r.end_ns = context_.end_ns;
  r.events = events_;
  r.dropped = stats.dropped;
  r.gpu_dropped = stats.gpu.dropped;
  r.names_overflowed = stats.names_overflowed;
  r.rank = info_.rank;
  r.devices = info_.devices;
  r.names = names_.result();
  r.gpu = gpu_.result();
  r.breakdown = breakdown_.result();
  r.bounds = bounds_.result();
  r.latency = latency_.result();
  r.jitter = jitter_.result();
  r.compile = compile_.result();
  r.data = data_.result();
  r.memory = memory_.result();
  r.timeline = timeline_.result();
  r.standalone.clear();
  for (const std::unique_ptr<Analysis>& analysis : standalone_)
    r.standalone.push_back(analysis.get());
  r.verdict = verdict(r.gpu, r.bounds, r.data, r.names.gpu_kernel_ns, options_.tiny_kernel_ns,
                      &r.compile, &r.jitter);
  return {};
}

std::string TraceReport::json(int indent) const {
  using nlohmann::json;
  const ReportResult& r = result_;
  json j;
  j["schema"] = "gpuprobe.report/1";
  j["duration_ms"] = ms(r.end_ns - r.start_ns);
  j["events"] = r.events;
  j["dropped"] = {
      {"events", r.dropped}, {"gpu_records", r.gpu_dropped}, {"names_capped", r.names_overflowed}};
  j["verdict"] = r.verdict;
  for (const Analysis* analysis : analyses_) analysis->write_json(context_, &j);
  json& sections = j["sections"] = json::array();
  for (const Section& s : describe_report(r, options_.text)) sections.push_back(to_json(s));
  // Names come from untrusted files: invalid UTF-8 becomes U+FFFD rather than an exception.
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace gpuprobe::analysis
