// `perfetto=PATH`: Perfetto's protobuf trace format (ui.perfetto.dev, trace_processor), streamed
// packet by packet: a process track, a track per thread (its own packet sequence, with names
// interned per sequence), a "GPU n" track with a child per stream, counter tracks, BEGIN/END
// slices, instants, flows from each launch to its GPU work, kernel details as debug annotations,
// and clock snapshots tying the trace to wall time.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/output_file.h"
#include "gpuprobe/sink.hpp"
#include "sinks/proto_writer.h"

namespace gpuprobe::sinks {

class PerfettoSink : public Sink {
 public:
  explicit PerfettoSink(std::string path);

  Status open(const TraceInfo& info) override;
  // The clock, NVTX and config a reader found at the end of a file, for the closing summary.
  void update_info(const TraceInfo& info) override;
  Status write(const EventBatch& batch) override;
  Status close(const Stats& stats, const TimeBase&) override;

 private:
  // One trusted packet sequence: its id, whether its first packet was written, and the names it
  // has interned (keyed by the address of their process-lifetime text).
  struct Sequence {
    std::uint32_t id = 0;
    bool started = false;
    std::unordered_map<const void*, std::uint64_t> names;
    // In front of `names`: most events repeat a recent name, found here without hashing.
    std::array<std::pair<const void*, std::uint64_t>, 64> recent_names{};
    std::unordered_map<const void*, std::uint64_t> annotation_names;
    std::array<std::pair<const void*, std::uint64_t>, 64> recent_annotation_names{};
    std::unordered_map<int, std::uint64_t> categories;
  };
  // A debug annotation of an event.
  struct Annotation {
    const char* name;  // process-lifetime text: interned by address
    enum Kind { kInt, kDouble, kString } kind;
    std::int64_t i;
    double d;
    const char* s;
  };

  Sequence& thread_sequence(std::uint32_t thread, const std::vector<ThreadInfo>& threads);
  void start_sequence(Sequence& seq, std::uint64_t default_track);
  void write_cpu_event(const Event& e, const TimeBase& time,
                       const std::vector<ThreadInfo>& threads);
  void write_gpu_event(const GpuActivity& a, const TimeBase& time);
  // One "gpuprobe device" instant per device, once: at open, or at close if learned later.
  void write_devices();
  // One TrackEvent packet. `track` 0 means the sequence's default track; `name` is interned
  // when `intern_name`, else written as text.
  void track_event(Sequence& seq, std::int64_t wall_ns, int type, std::uint64_t track,
                   const char* name, bool intern_name, int category,
                   const std::vector<Annotation>& annotations, std::uint64_t flow,
                   std::uint64_t terminating_flow, const double* counter);
  // Encodes a TrackEvent packet without nested buffers into `out` (kMaxSimplePacket bytes);
  // returns its size. For events whose names are interned already and that carry no
  // annotations or flows.
  static std::size_t encode_simple_event(char* out, std::uint32_t sequence, std::uint64_t ts,
                                         int type, std::uint64_t track, std::uint64_t name_iid,
                                         std::uint64_t category_iid, const double* counter);
  static constexpr std::size_t kMaxSimplePacket = 96;
  // Appends the TrackEvent packet of an event with annotations or flows whose name, category
  // and annotation names `seq` has all interned already, encoded front to back like
  // encode_simple_event: a GPU activity's BEGIN, once its sequence has seen its name. Returns
  // false, having written nothing, when something is not interned yet or the packet would
  // exceed kMaxAnnotatedPacket bytes (a long string argument): track_event() writes it then.
  bool append_annotated_event(Sequence& seq, std::uint64_t ts, int type, std::uint64_t track,
                              std::uint64_t name_iid, std::uint64_t category_iid,
                              const std::vector<Annotation>& annotations, std::uint64_t flow,
                              std::uint64_t terminating_flow);
  static constexpr std::size_t kMaxAnnotatedPacket = 1024;
  // The iid `name` has on `seq`, or 0 when it is not interned there yet.
  std::uint64_t interned_name(Sequence& seq, const char* name);
  // The iid the annotation name `name` has on `seq`, or 0 when it is not interned there yet.
  std::uint64_t interned_annotation_name(Sequence& seq, const char* name);
  void track_descriptor(std::uint64_t uuid, std::uint64_t parent, const std::string& name,
                        const ThreadInfo* thread, std::int64_t tid, bool counter, bool no_merge);
  std::uint64_t gpu_stream_track(std::uint32_t device, std::uint32_t stream);
  std::uint64_t api_thread_track(std::int64_t tid, bool known_thread);
  std::uint64_t counter_track(const CallSite* site);

  std::string path_;
  base::OutputFile out_;
  std::string& buf_ = out_.buffer();  // what is written goes here
  std::vector<std::string> scratch_;
  std::vector<Annotation> gpu_annotations_;  // write_gpu_event's, reused from event to event
  TraceInfo info_;
  std::int64_t base_ns_ = 0;
  Sequence process_seq_;  // descriptors, GPU work and API calls
  std::vector<Sequence> thread_seqs_;
  std::set<std::uint32_t> gpus_;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams_;
  std::set<std::int64_t> api_threads_;
  std::unordered_map<std::int64_t, std::uint32_t> thread_index_;  // gettid -> thread index
  std::unordered_map<const CallSite*, std::uint64_t> counters_;
  bool overhead_track_ = false;
  bool devices_written_ = false;
};

}  // namespace gpuprobe::sinks
