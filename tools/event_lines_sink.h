// `gpuprobe dump` (a trace's events as text, not a flight recorder's dump): a Sink that prints
// every event as one line, in file order: start (ms after the trace's start), duration, thread
// or GPU stream, category, name, details.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::tools {

class EventLinesSink : public Sink {
 public:
  explicit EventLinesSink(std::FILE* out) : out_(out) {}

  Status open(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  void update_info(const TraceInfo& info) override { category_names_ = info.category_names; }
  Status close(const Stats& stats, const TimeBase& time) override;

 private:
  std::FILE* out_;
  std::int64_t start_ns_ = 0;
  std::vector<std::string> category_names_;
};

}  // namespace gpuprobe::tools
