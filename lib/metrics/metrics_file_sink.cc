#include "metrics/metrics_file_sink.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

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
  const std::string text = metrics_.exposition();
  const std::string temporary = path_ + ".tmp";
  std::FILE* f = std::fopen(temporary.c_str(), "wb");
  if (f == nullptr) return Status::Error(temporary + ": " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int error = written ? 0 : errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(temporary.c_str());
    return Status::Error(temporary + ": " + std::strerror(error != 0 ? error : errno));
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(temporary.c_str());
    return Status::Error(path_ + ": " + std::strerror(e));
  }
  return {};
}

}  // namespace gpuprobe::metrics
