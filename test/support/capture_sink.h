// A sink that keeps every event in memory, with names and times resolved, for tests to inspect.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::testing {

struct CapturedEvent {
  EventType type;
  std::uint32_t thread;
  std::int64_t os_tid;
  std::string name;
  Category category;
  std::int64_t begin_ns;
  std::int64_t end_ns;
  double value;
};

class CaptureSink : public Sink {
 public:
  Status open(const TraceInfo& info) override {
    std::lock_guard<std::mutex> lock(mu_);
    info_ = info;
    opened_ = true;
    return {};
  }

  Status write(const EventBatch& batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    time_ = *batch.time;
    for (const Event& e : batch) {
      if (e.type == EventType::kGpu) {
        gpu_.push_back(*e.gpu);
        continue;
      }
      events_.push_back(CapturedEvent{e.type, e.thread, (*batch.threads)[e.thread].os_tid,
                                      e.site->name, e.site->category, batch.time->wall_ns(e.begin),
                                      batch.time->wall_ns(e.end), e.value});
    }
    ++batches_;
    return {};
  }

  Status close(const Stats& stats, const TimeBase& time) override {
    std::lock_guard<std::mutex> lock(mu_);
    time_ = time;
    final_stats_ = stats;
    closed_ = true;
    return {};
  }

  std::vector<CapturedEvent> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  std::vector<GpuActivity> gpu() const {
    std::lock_guard<std::mutex> lock(mu_);
    return gpu_;
  }
  std::vector<CapturedEvent> named(const std::string& name) const {
    std::vector<CapturedEvent> out;
    for (const CapturedEvent& e : events()) {
      if (e.name == name) out.push_back(e);
    }
    return out;
  }
  // The time base of the latest batch (or of close).
  TimeBase time() const {
    std::lock_guard<std::mutex> lock(mu_);
    return time_;
  }
  Stats final_stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return final_stats_;
  }
  // The time base of the latest batch (the final one after close), for GPU activity times.
  TimeBase time_base() const {
    std::lock_guard<std::mutex> lock(mu_);
    return time_;
  }
  TraceInfo info() const {
    std::lock_guard<std::mutex> lock(mu_);
    return info_;
  }
  bool opened() const {
    std::lock_guard<std::mutex> lock(mu_);
    return opened_;
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  mutable std::mutex mu_;
  TraceInfo info_;
  std::vector<CapturedEvent> events_;
  std::vector<GpuActivity> gpu_;
  Stats final_stats_;
  TimeBase time_;
  std::size_t batches_ = 0;
  bool opened_ = false;
  bool closed_ = false;
};

}  // namespace gpuprobe::testing
