#include "metrics/metrics_file_sink.h"

#include "base/output_file.h"

namespace gpuprobe::metrics {
namespace {

constexpr auto kPeriod = std::chrono::seconds(1);

}  // namespace

Status MetricsFileSink::open(const TraceInfo& info) {
  metrics_.set_rank(info.rank);
  // A first version now: a path that cannot be written fails before the session records.
  return publish();
}

Status MetricsFileSink::write(const EventBatch& batch) {
  metrics_.add(batch);
  if (std::chrono::steady_clock::now() - published_ < kPeriod) return {};
  return publish();
}

Status MetricsFileSink::close(const Stats& stats, const TimeBase&) {
  metrics_.finish(stats);
  return publish();
}

Status MetricsFileSink::publish() {
  published_ = std::chrono::steady_clock::now();
  // Through the one output-file primitive: never through another user's link, never into a
  // device, never over a file another writer put there while this version was written.
  base::OutputFile file;
  Status s = file.open(path_, /*clean_stale=*/!opened_);
  opened_ = true;
  if (s.ok()) s = file.write(metrics_.exposition());
  if (s.ok()) s = file.commit();
  return s;
}

}  // namespace gpuprobe::metrics
