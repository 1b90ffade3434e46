// The sink fuzz targets read into: it touches every field the readers hand over (names, GPU
// records, thread names), so a dangling pointer or an uninitialized field shows up under
// AddressSanitizer/UBSan rather than going unnoticed.
#pragma once

#include <cstring>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::fuzz {

class FuzzSink : public Sink {
 public:
  Status open(const TraceInfo& info) override {
    sum_ += info.process_name.size() + info.devices.size();
    return {};
  }
  Status write(const EventBatch& batch) override {
    for (const Event& e : batch) {
      sum_ += static_cast<std::size_t>(batch.time->wall_ns(e.begin) ^ batch.time->wall_ns(e.end));
      if (e.type == EventType::kGpu) {
        sum_ += std::strlen(e.gpu->name) + e.gpu->correlation + e.gpu->bytes;
        if (e.gpu->range != nullptr) sum_ += std::strlen(e.gpu->range->name);
      } else {
        sum_ += std::strlen(e.site->name) + (*batch.threads)[e.thread].name.size() +
                (e.value > 0 ? 1 : 0);
      }
    }
    return {};
  }
  Status close(const Stats& stats, const TimeBase&) override {
    for (const ThreadInfo& t : stats.threads) sum_ += t.name.size();
    return {};
  }
  std::size_t sum() const { return sum_; }

 private:
  std::size_t sum_ = 0;
};

}  // namespace gpuprobe::fuzz
