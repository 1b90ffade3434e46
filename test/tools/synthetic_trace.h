// What the synthetic-trace writers share: a session's facts (pid 4242, one thread 4243, H200s,
// one tick per nanosecond) and writing the events through the sink a config names, as a
// recording session would.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/sink_registry.h"
#include "session/builtin_sinks.h"

namespace gpuprobe::test {

inline TraceInfo synthetic_info(const char* process, int devices) {
  TraceInfo info;
  info.pid = 4242;
  info.process_name = process;
  info.start_wall_ns = 1'764'460'800'000'000'000;
  for (int d = 0; d < devices; ++d) {
    DeviceInfo device;
    device.id = d;
    device.name = "NVIDIA H200";
    device.num_sms = 132;
    info.devices.push_back(device);
  }
  return info;
}

// Writes `events` (of thread 0, named `thread`) through the sink `config` names, e.g.
// chrome=trace.json: 0, or 2 with the sink's error printed, or 1 when the sink failed.
inline int write_synthetic(const std::string& config, const TraceInfo& info,
                           const std::vector<Event>& events, const char* thread) {
  const TimeBase time(0, info.start_wall_ns, 1.0);  // one tick per nanosecond
  std::vector<ThreadInfo> threads(1);
  threads[0].os_tid = 4243;
  threads[0].name = thread;
  std::unique_ptr<Sink> sink;
  session::register_builtin_sinks();
  if (Status s = core::SinkRegistry::get().create(config, &sink); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  Stats stats;
  stats.threads = threads;
  stats.gpu.status = "cupti";
  const bool ok = sink->open(info).ok() &&
                  sink->write(EventBatch{events.data(), events.size(), &time, &threads}).ok() &&
                  sink->close(stats, time).ok();
  return ok ? 0 : 1;
}

}  // namespace gpuprobe::test
