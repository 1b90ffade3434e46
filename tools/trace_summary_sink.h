// `gpuprobe info`: a Sink that summarizes a trace — its span, events per category and kind,
// steps, threads, devices and streams, and what was dropped — and prints it at close.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::tools {

class TraceSummarySink : public Sink {
 public:
  explicit TraceSummarySink(std::FILE* out) : out_(out) {}

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  void update_info(const TraceInfo& info) override {
    info_.category_names = info.category_names;
    adopt_rank(info_, info);  // a Perfetto trace states its rank at its end
  }
  Status close(const Stats& stats, const TimeBase& time) override;

 private:
  std::FILE* out_;
  TraceInfo info_;
  std::int64_t first_ns_ = INT64_MAX, last_ns_ = INT64_MIN;
  std::uint64_t cpu_counts_[32][3] = {};  // [category][range, instant, counter]
  std::uint64_t gpu_counts_[8] = {};      // by GpuActivityKind
  std::uint64_t steps_ = 0;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> streams_;  // kernels+copies
  std::uint64_t gpu_ns_ = 0;
};

}  // namespace gpuprobe::tools
