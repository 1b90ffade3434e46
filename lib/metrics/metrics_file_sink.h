// `metrics_file=PATH`: the session's metrics (session_metrics.h) in the Prometheus text format,
// rewritten in place at most once a second and at the end — the file node_exporter's textfile
// collector reads (name it *.prom in its directory), or that a cron job or a test can read.
// Each version replaces the last whole (written beside it, then renamed, by base::OutputFile
// and its rules for links, devices and other writers), so a reader never sees half a file.
#pragma once

#include <chrono>
#include <string>

#include "gpuprobe/sink.hpp"
#include "metrics/session_metrics.h"

namespace gpuprobe::metrics {

class MetricsFileSink : public Sink {
 public:
  explicit MetricsFileSink(std::string path, const SessionHooks& hooks = {})
      : path_(std::move(path)), metrics_(hooks.ranges) {
    metrics_.set_hooks(hooks);
  }

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

 private:
  Status publish();

  std::string path_;
  SessionMetrics metrics_;
  std::chrono::steady_clock::time_point published_;
  bool opened_ = false;  // stale temporary files are looked for at the first version only
};

}  // namespace gpuprobe::metrics
