// A custom output, registered by name: `latency=PATH` writes, per range name, the count and the
// P50/P99/max durations as a text table — the kind of summary a serving dashboard wants, in a
// few dozen lines on top of gpuprobe::Sink.
//
//   custom_sink [PATH]      default: latency.txt
#include <gpuprobe/gpuprobe.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

class LatencySink : public gpuprobe::Sink {
 public:
  explicit LatencySink(std::string path) : path_(std::move(path)) {}

  gpuprobe::Status open(const gpuprobe::TraceInfo&) override {
    // Fail early, while the session can still say so, rather than at the end.
    file_ = std::fopen(path_.c_str(), "w");
    if (file_ == nullptr) return gpuprobe::Status::Error("cannot open '" + path_ + "'");
    return {};
  }

  gpuprobe::Status write(const gpuprobe::EventBatch& batch) override {
    for (const gpuprobe::Event& e : batch) {
      if (e.type != gpuprobe::EventType::kRange) continue;
      durations_ns_[e.site->name].push_back(batch.time->duration_ns(e.begin, e.end));
    }
    return {};
  }

  gpuprobe::Status close(const gpuprobe::Stats& stats, const gpuprobe::TimeBase&) override {
    std::fprintf(file_, "%-24s %8s %10s %10s %10s\n", "range", "count", "p50 us", "p99 us",
                 "max us");
    for (auto& [name, d] : durations_ns_) {
      std::sort(d.begin(), d.end());
      const auto at = [&d](double q) {
        return static_cast<double>(d[static_cast<std::size_t>(q * (d.size() - 1))]) / 1e3;
      };
      std::fprintf(file_, "%-24s %8zu %10.1f %10.1f %10.1f\n", name.c_str(), d.size(), at(0.5),
                   at(0.99), at(1.0));
    }
    // Like every output, it says what it could not see.
    std::fprintf(file_, "events dropped: %llu\n", static_cast<unsigned long long>(stats.dropped));
    const bool ok = std::fclose(file_) == 0;
    file_ = nullptr;
    return ok ? gpuprobe::Status() : gpuprobe::Status::Error("cannot write '" + path_ + "'");
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::map<std::string, std::vector<std::int64_t>> durations_ns_;
};

void handle_request(int i) {
  GPUPROBE_RANGE("request");
  std::this_thread::sleep_for(std::chrono::microseconds(i % 10 == 0 ? 2000 : 200));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "latency.txt";
  // Registered once, before sessions use the key; then it is config like any other output.
  const gpuprobe::Status registered = gpuprobe::register_sink(
      "latency", "PATH", "P50/P99/max of every range name, as a text table",
      [](std::string_view value) { return std::make_unique<LatencySink>(std::string(value)); });
  if (!registered.ok()) {
    std::fprintf(stderr, "%s\n", registered.message().c_str());
    return 1;
  }
  gpuprobe::Session session("latency=" + path);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.error().c_str());
    return 1;
  }
  for (int i = 0; i < 100; ++i) handle_request(i);
  if (!session.stop().ok()) return 1;
  std::printf("latency table: %s\n", path.c_str());
  return 0;
}
