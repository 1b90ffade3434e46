// Decoders of the small Perfetto messages the trace reader needs whole (perfetto_trace_reader.cc
// reads packets and events; these read what a packet carries beside them): track descriptors,
// debug annotations, clock snapshots, sequence defaults, and gpuprobe's own instants (session
// statistics, device properties). Field numbers from formats/perfetto_fields.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unordered_map>
#include "gpuprobe/sink.hpp"

namespace gpuprobe::readers::perfetto {

struct Annotation {
  std::string name;
  bool is_string = false;
  double number = 0;
  std::string text;
};

struct Track {
  std::string name;
  std::uint64_t parent = 0;
  bool thread = false, process = false, counter = false;
  std::int64_t pid = 0, tid = 0;
};

// Clock id -> (its value, realtime's value) at the snapshot.
using ClockPairs = std::map<std::uint32_t, std::pair<std::int64_t, std::int64_t>>;

// A TrackDescriptor: its uuid and what it says of the track.
Track decode_track_descriptor(std::string_view bytes, std::uint64_t* uuid);

// A DebugAnnotation; `names` are the sequence's interned annotation names.
Annotation decode_annotation(std::string_view bytes,
                             const std::unordered_map<std::uint64_t, std::string>& names);

// A ClockSnapshot, into `out` (unchanged when the snapshot has no realtime clock).
void decode_clock_snapshot(std::string_view bytes, ClockPairs* out);

// TracePacketDefaults: the sequence's clock and track, where it says.
void decode_defaults(std::string_view bytes, std::uint32_t* clock, std::uint64_t* track);

// The "gpuprobe stats" instant's annotations, into the trace's info and statistics.
void apply_stats(const std::vector<Annotation>& annotations, TraceInfo* info, Stats* stats);

// A "gpuprobe device" instant (formats/device_properties.h).
DeviceInfo decode_device(const std::vector<Annotation>& annotations);

}  // namespace gpuprobe::readers::perfetto
