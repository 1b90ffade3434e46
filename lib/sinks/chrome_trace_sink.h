// `chrome=PATH`: Chrome trace-event JSON in the layout torch.profiler/Kineto writes, so that
// Perfetto UI, chrome://tracing, HTA and TensorBoard's profiler plugin read it.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/output_file.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::sinks {

class ChromeTraceSink : public Sink {
 public:
  explicit ChromeTraceSink(std::string path);

  Status open(const TraceInfo& info) override;
  // The clock, NVTX and config a reader found at the end of a file, for the closing summary.
  void update_info(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase& time) override;

  // The JSON time base for a session starting at `start_wall_ns`: the start floored to a whole
  // day, so `ts` values stay small enough for doubles to keep nanoseconds.
  static std::int64_t base_time_ns(std::int64_t start_wall_ns);

  // The file name torch.profiler's tensorboard_trace_handler gives a trace:
  // "<host>_<pid>.<start ns>.pt.trace.json".
  static std::string torch_profiler_name(const TraceInfo& info);

 private:
  // The constant part of an event for one call site: `{"ph":..,"cat":..,"name":..,` and, for
  // counters, the quoted name used as the series key.
  struct SiteText {
    std::string head[3];  // indexed by EventType
    std::string quoted_name;
  };
  const SiteText& site_text(const CallSite* site);
  // `"pid":P,"tid":T,` for one thread.
  const std::string& thread_text(std::uint32_t thread, const std::vector<ThreadInfo>& threads);
  void append_event(const Event& e, const TimeBase& time, const std::vector<ThreadInfo>& threads);
  void append_separator();
  void append_device_properties();  // once: at open, or at close if learned later
  void append_distributed_info();   // likewise (a Perfetto trace states the rank at its end)
  void append_metadata(const Stats& stats, std::int64_t ts_ns);
  void append_gpu_stats(const GpuStats& gpu);

  std::string path_;
  base::OutputFile out_;
  std::string& buf_ = out_.buffer();  // what is written goes here
  TraceInfo info_;
  bool devices_written_ = false;
  bool distributed_written_ = false;
  std::int64_t base_ns_ = 0;
  bool first_event_ = true;
  std::unordered_map<const CallSite*, SiteText> sites_;
  std::vector<std::string> threads_;
  // GPU tracks seen, for their process and thread names at close.
  std::set<std::uint32_t> devices_;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams_;  // (device, stream)
  bool overhead_seen_ = false;
  // API calls from threads gpuprobe does not know, named by CUPTI's thread id.
  std::set<std::int64_t> unknown_api_threads_;
};

}  // namespace gpuprobe::sinks
