// The Perfetto sink's output, decoded with classes protoc generates from
// third_party/perfetto/perfetto_trace.proto (Perfetto's field numbers): tracks, slices, interning,
// clocks, counters, instants, steps, GPU tracks and flows, and the size per range.
#include "sinks/perfetto_sink.h"

#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "perfetto_trace.pb.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
namespace pp = perfetto::protos;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / (name + "_" + std::to_string(getpid()) + ".pftrace"))
      .string();
}

// A decoded trace with every event resolved: its track, name (interned names looked up on the
// event's own sequence, as trace_processor does) and wall time.
struct Decoded {
  struct Slice {
    int type;
    std::uint64_t track;
    std::string name;
    std::int64_t wall_ns;
    const pp::TrackEvent* event;
    std::map<std::string, std::string> args;  // debug annotations, names resolved, values as text
  };
  pp::Trace trace;
  std::map<std::uint64_t, pp::TrackDescriptor> tracks;
  std::vector<Slice> events;
  std::string error;  // the first inconsistency found
};

Decoded decode(const std::string& path) {
  Decoded d;
  std::ifstream in(path, std::ios::binary);
  REQUIRE(d.trace.ParseFromIstream(&in));
  struct SequenceState {
    bool cleared = false;
    std::uint64_t default_track = 0;
    std::int64_t clock_origin = -1;  // wall ns at session clock 0
    std::map<std::uint64_t, std::string> names;
    std::map<std::uint64_t, std::string> annotation_names;
  };
  std::map<std::uint32_t, SequenceState> sequences;
  for (const pp::TracePacket& p : d.trace.packet()) {
    SequenceState& seq = sequences[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & 1) seq.cleared = true;
    if (p.has_trace_packet_defaults()) {
      seq.default_track = p.trace_packet_defaults().track_event_defaults().track_uuid();
      if (p.trace_packet_defaults().timestamp_clock_id() != 64)
        d.error = "unexpected default clock";
    }
    if (p.has_clock_snapshot() && p.trusted_packet_sequence_id() != 0) {
      for (const auto& c : p.clock_snapshot().clocks()) {
        if (c.clock_id() == 1) seq.clock_origin = static_cast<std::int64_t>(c.timestamp());
      }
    }
    for (const auto& n : p.interned_data().event_names()) seq.names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_names())
      seq.annotation_names[n.iid()] = n.name();
    if (p.has_track_descriptor()) d.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
    if (!p.has_track_event()) continue;
    const pp::TrackEvent& e = p.track_event();
    if (!seq.cleared && d.error.empty()) d.error = "event before its sequence was started";
    std::string name = e.name();
    if (e.has_name_iid()) {
      const auto it = seq.names.find(e.name_iid());
      if (it == seq.names.end()) {
        if (d.error.empty()) d.error = "name_iid " + std::to_string(e.name_iid()) + " not interned";
      } else {
        name = it->second;
      }
    }
    const std::int64_t wall = p.timestamp_clock_id() == 1
                                  ? static_cast<std::int64_t>(p.timestamp())
                                  : seq.clock_origin + static_cast<std::int64_t>(p.timestamp());
    std::map<std::string, std::string> args;
    for (const pp::DebugAnnotation& a : e.debug_annotations()) {
      const auto it = seq.annotation_names.find(a.name_iid());
      if (it == seq.annotation_names.end()) {
        if (d.error.empty()) d.error = "annotation name_iid not interned";
        continue;
      }
      args[it->second] = a.has_int_value()      ? std::to_string(a.int_value())
                         : a.has_double_value() ? std::to_string(a.double_value())
                                                : a.string_value();
    }
    d.events.push_back({e.type(), e.has_track_uuid() ? e.track_uuid() : seq.default_track, name,
                        wall, &e, std::move(args)});
  }
  return d;
}

std::vector<Decoded::Slice> with_name(const Decoded& d, const std::string& name) {
  std::vector<Decoded::Slice> out;
  for (const auto& e : d.events) {
    if (e.name == name) out.push_back(e);
  }
  return out;
}

TEST_CASE("A session's Perfetto trace decodes with Perfetto's schema, every name resolved") {
  const std::string path = temp_path("session");
  Session session("perfetto=" + path);
  REQUIRE(session.ok());
  {
    GPUPROBE_RANGE("outer");
    { GPUPROBE_RANGE("inner"); }
    GPUPROBE_INSTANT("checkpoint");
    counter("queue_depth", 12.5);
  }
  step();
  { ScopedRange r(std::string_view("renamed"), Category::kGc); }
  std::thread([] {
    set_thread_name("worker");
    GPUPROBE_RANGE("on_worker");
  }).join();
  REQUIRE(session.stop().ok());
  const Decoded d = decode(path);
  fs::remove(path);
  INFO(d.error);
  REQUIRE(d.error.empty());

  // Tracks: the process, and each thread with its name and tid.
  std::map<std::string, std::uint64_t> thread_tracks;
  bool process = false;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process()) process = t.process().pid() == getpid();
    if (t.has_thread()) thread_tracks[t.thread().thread_name()] = uuid;
  }
  REQUIRE(process);
  REQUIRE(thread_tracks.count("worker") == 1);

  const auto outer = with_name(d, "outer");
  const auto inner = with_name(d, "inner");
  REQUIRE(outer.size() == 1);
  REQUIRE(inner.size() == 1);
  REQUIRE(outer[0].type == pp::TrackEvent::TYPE_SLICE_BEGIN);
  REQUIRE(outer[0].track == inner[0].track);
  REQUIRE(outer[0].wall_ns <= inner[0].wall_ns);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  REQUIRE(std::llabs(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() -
                     outer[0].wall_ns) < 60'000'000'000LL);
  REQUIRE(with_name(d, "on_worker").at(0).track == thread_tracks["worker"]);
  REQUIRE(with_name(d, "checkpoint").at(0).type == pp::TrackEvent::TYPE_INSTANT);
  REQUIRE(with_name(d, "ProfilerStep#0").size() == 1);
  REQUIRE(with_name(d, "renamed").at(0).event->category_iids_size() == 1);

  // Every BEGIN has its END on the same track, and ENDs never precede their BEGINs.
  std::map<std::uint64_t, std::vector<std::int64_t>> begins, ends;
  for (const auto& e : d.events) {
    if (e.type == pp::TrackEvent::TYPE_SLICE_BEGIN) begins[e.track].push_back(e.wall_ns);
    if (e.type == pp::TrackEvent::TYPE_SLICE_END) ends[e.track].push_back(e.wall_ns);
  }
  for (auto& [track, b] : begins) {
    REQUIRE(ends[track].size() == b.size());
    std::sort(b.begin(), b.end());
    std::sort(ends[track].begin(), ends[track].end());
    for (std::size_t i = 0; i < b.size(); ++i) REQUIRE(b[i] <= ends[track][i]);
  }

  // Counters sit on a counter track named after them.
  bool counter_seen = false;
  for (const auto& e : d.events) {
    if (e.type != pp::TrackEvent::TYPE_COUNTER) continue;
    const pp::TrackDescriptor& t = d.tracks.at(e.track);
    REQUIRE(t.has_counter());
    REQUIRE(t.name() == "queue_depth");
    REQUIRE(e.event->double_counter_value() == 12.5);
    counter_seen = true;
  }
  REQUIRE(counter_seen);

  // The statistics travel in the trace.
  const auto stats = with_name(d, "gpuprobe stats");
  REQUIRE(stats.size() == 1);
  REQUIRE(stats[0].event->debug_annotations_size() >= 4);
}

TEST_CASE(
    "GPU work gets a GPU track with one unmerged track per stream, and flows from its launch") {
  const std::string path = temp_path("gpu");
  TraceInfo info;
  info.pid = 4242;
  info.start_wall_ns = 1'764'460'800'000'000'000;
  const TimeBase time(0, info.start_wall_ns, 1.0);
  std::vector<GpuActivity> activities(4);
  GpuActivity& launch = activities[0];
  launch.kind = GpuActivityKind::kRuntimeApi;
  launch.name = "cudaLaunchKernel";
  launch.correlation = 42;
  launch.thread_id = 555;
  launch.start = 1000;
  launch.end = 3000;
  const CallSite step{"training step", "", "", 0, 0, Category::kApp};
  for (int i = 1; i <= 3; ++i) {
    GpuActivity& k = activities[i];
    k.kind = GpuActivityKind::kKernel;
    k.name = "add_kernel";
    k.correlation = 41 + i;
    k.stream = i == 1 ? 7 : 13;
    k.grid[0] = 128;
    k.block[0] = 128 << i;
    k.registers_per_thread = 30 + i;
    if (i > 1) k.range = &step;  // a string argument, new to the trace in the second kernel
    k.start = 5000 * i;
    k.end = 5000 * i + 800;
  }
  sinks::PerfettoSink sink(path);
  REQUIRE(sink.open(info).ok());
  std::vector<Event> events;
  for (const GpuActivity& a : activities) {
    events.push_back(Event::from_gpu(a));
  }
  const std::vector<ThreadInfo> threads;
  REQUIRE(sink.write(EventBatch{events.data(), events.size(), &time, &threads}).ok());
  REQUIRE(sink.close(Stats{}, time).ok());
  const Decoded d = decode(path);
  fs::remove(path);
  INFO(d.error);
  REQUIRE(d.error.empty());

  std::uint64_t gpu0 = 0;
  std::map<std::string, pp::TrackDescriptor> streams;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() == "GPU 0") gpu0 = uuid;
  }
  REQUIRE(gpu0 != 0);
  for (const auto& [uuid, t] : d.tracks) {
    if (t.parent_uuid() == gpu0) streams[t.name()] = t;
  }
  REQUIRE(streams.size() == 2);
  REQUIRE(streams["stream 7"].sibling_merge_behavior() ==
          pp::TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE);
  const auto kernels = with_name(d, "add_kernel");
  REQUIRE(kernels.size() == 3);
  REQUIRE(kernels[0].track == streams["stream 7"].uuid());
  REQUIRE(kernels[1].track == streams["stream 13"].uuid());
  REQUIRE(kernels[0].wall_ns - info.start_wall_ns == 5000);
  REQUIRE(kernels[0].event->terminating_flow_ids_size() == 1);
  REQUIRE(kernels[0].event->terminating_flow_ids(0) == 42);
  const auto call = with_name(d, "cudaLaunchKernel").at(0);
  REQUIRE(call.event->flow_ids_size() == 1);
  REQUIRE(call.event->flow_ids(0) == 42);
  REQUIRE(d.tracks.at(call.track).name() == "CUDA API thread (CUPTI id 555)");
  // Kernel details as debug annotations, names interned.
  REQUIRE(kernels[0].event->debug_annotations_size() >= 5);
  // Every argument with its own value. The sink writes a packet whose names are all interned on
  // its sequence by a path of its own (the third kernel's; the second interns "range"): the
  // decoded packets must not tell the two apart.
  for (int i = 0; i < 3; ++i) {
    INFO("kernel " << i);
    const auto& args = kernels[static_cast<std::size_t>(i)].args;
    REQUIRE(args.at("correlation") == std::to_string(42 + i));
    REQUIRE(args.at("stream") == (i == 0 ? "7" : "13"));
    REQUIRE(args.at("grid.x") == "128");
    REQUIRE(args.at("block.x") == std::to_string(256 << i));
    REQUIRE(args.at("registers per thread") == std::to_string(31 + i));
    REQUIRE(args.size() == kernels[0].args.size() + (i == 0 ? 0 : 1));
    if (i > 0) REQUIRE(args.at("range") == "training step");
  }
  REQUIRE(kernels[2].event->terminating_flow_ids(0) == 44);
  bool interned_annotations = false;
  for (const pp::TracePacket& p : d.trace.packet())
    interned_annotations |= p.interned_data().debug_annotation_names_size() > 0;
  REQUIRE(interned_annotations);
}

TEST_CASE("A .gz path writes the same trace gzip-compressed") {
  const std::string path = temp_path("gzipped") + ".gz";
  Session session("perfetto=" + path);
  { GPUPROBE_RANGE("compressed_range"); }
  REQUIRE(session.stop().ok());
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string raw;
  char chunk[65536];
  int n;
  while ((n = gzread(f, chunk, sizeof chunk)) > 0) raw.append(chunk, static_cast<std::size_t>(n));
  gzclose(f);
  fs::remove(path);
  const std::string plain = temp_path("gunzipped");
  std::ofstream(plain, std::ios::binary) << raw;
  const Decoded d = decode(plain);
  fs::remove(plain);
  INFO(d.error);
  REQUIRE(d.error.empty());
  REQUIRE(with_name(d, "compressed_range").size() == 1);
}

TEST_CASE("A range costs at most 40 bytes of Perfetto trace") {
  const std::string path = temp_path("size");
  constexpr int kRanges = 20000;
  Session session("perfetto=" + path + ",ring=65536");
  for (int i = 0; i < kRanges; ++i) {
    GPUPROBE_RANGE("sized_range");
  }
  REQUIRE(session.stop().ok());
  const double per_range = static_cast<double>(fs::file_size(path)) / kRanges;
  fs::remove(path);
  INFO(per_range << " bytes per range");
  REQUIRE(per_range <= 40.0);
}

}  // namespace
}  // namespace gpuprobe
