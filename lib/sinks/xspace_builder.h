// A trace as XProf's XSpace (the `<host>.xplane.pb` that XProf and TensorBoard's profile plugin
// open): a "/host:CPU" plane with a line per thread holding its ranges, instants, steps and CUDA
// API calls, and a "/device:GPU:n" plane per device with a line per stream holding kernels,
// copies and sets. Names and stat keys are interned per plane, as XProf does.
//
// An XSpace is one protobuf message, so it can only be written once complete: events are kept
// encoded, per line, until write_to(), within `max_bytes`; past that they are counted, and
// reported in the XSpace's warnings and by dropped().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/output_file.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::sinks {

class XSpaceBuilder {
 public:
  explicit XSpaceBuilder(std::size_t max_bytes = std::size_t{256} << 20);

  void start(const TraceInfo& info);
  void add(const EventBatch& batch);
  // Writes the XSpace to `out` (not committed).
  Status write_to(base::OutputFile& out, const Stats& stats);

  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  struct Line {
    std::string name;
    std::string events;  // encoded XEvents, each as field 4 of XLine
    std::int64_t end_ps = 0;
  };
  struct Plane {
    std::int64_t id = 0;
    std::string name;
    std::map<std::int64_t, Line> lines;  // by line id
    std::unordered_map<std::string, std::int64_t> event_names;
    std::unordered_map<std::string, std::int64_t> stat_names;
    std::vector<std::pair<std::int64_t, std::string>> plane_stats;  // encoded XStats
  };
  struct Stat;

  Plane& device_plane(std::uint32_t device);
  std::int64_t event_id(Plane& plane, const std::string& name);
  std::int64_t stat_id(Plane& plane, const char* name);
  void add_event(Plane& plane, std::int64_t line, const std::string& line_name,
                 const std::string& name, std::int64_t begin_ns, std::int64_t end_ns,
                 const std::vector<Stat>& stats);
  void add_gpu(const GpuActivity& a, const TimeBase& time, const std::vector<ThreadInfo>& threads);
  std::string encode_plane_tail(const Plane& plane) const;

  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t dropped_ = 0;
  TraceInfo info_;
  Plane host_;
  std::map<std::uint32_t, Plane> devices_;
  std::unordered_map<std::int64_t, std::uint32_t> thread_by_tid_;
  std::unordered_map<const CallSite*, std::string> site_names_;
  std::string event_;                                               // the XEvent being encoded
  std::vector<std::string> scratch_ = std::vector<std::string>(1);  // its nested XStat
};

}  // namespace gpuprobe::sinks
