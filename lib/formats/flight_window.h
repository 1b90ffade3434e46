// The flight window file (`dump_format=window`, window.gpwindow in a dump): the events of a
// dump's window as the flight recorder holds them (formats/flight_events.h), with the tables and
// facts needed to read them — written in the time it takes to copy the bytes, where a Perfetto
// or Chrome trace has to be encoded event by event. `gpuprobe convert` turns it into any format,
// and `gpuprobe report` and every other command read it like a trace.
//
// Layout: the 8 bytes "GPWINDOW", the format version (varint), then records, each a tag (varint),
// a length (varint) and that many bytes; a reader skips the tags it does not know. The writer
// puts kInfo, kTime, kThreads, kSites, kNames, kStats and kWindow first, then one kChunk record
// per chunk, oldest first, then kEnd. Integers are varints (signed ones zigzag), strings a
// length and UTF-8 bytes, doubles 8 bytes little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/flight_events.h"
#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::formats::flight_window {

inline constexpr char kMagic[8] = {'G', 'P', 'W', 'I', 'N', 'D', 'O', 'W'};
inline constexpr std::uint64_t kVersion = 1;

enum Tag : std::uint64_t {
  kInfo = 1,     // TraceInfo
  kTime = 2,     // the TimeBase's lines: count, then ref_ticks, ref_wall_ns, ns_per_tick each
  kThreads = 3,  // count, then os_tid, name, written, dropped, peak_fill each
  kSites = 4,    // count, then name, function, file, line, color, category each
  kNames = 5,    // count, then the names GPU activities point to
  kStats = 6,    // Stats without its threads
  kWindow = 7,   // from_tick, to_tick: the events a reader keeps are those overlapping it
  kChunk = 8,    // first_tick, min_tick, max_tick, events, then the chunk's bytes to the end
  kEnd = 9,      // empty: the file is complete
};

// The text of a call site, as the file carries it.
struct SiteText {
  std::string name, function, file;
  std::uint32_t line = 0;
  std::uint32_t color = 0;
  Category category = Category::kApp;
};

// Bounds a reader holds untrusted files to.
inline constexpr std::uint64_t kMaxRecordBytes = 16u << 20;
inline constexpr std::uint64_t kMaxTableEntries = 1u << 22;

void put_string(std::vector<std::uint8_t>* out, const std::string& s);
void put_record(std::vector<std::uint8_t>* out, Tag tag, const std::vector<std::uint8_t>& body);

std::vector<std::uint8_t> info_record(const TraceInfo& info);
std::vector<std::uint8_t> time_record(const TimeBase& time);
std::vector<std::uint8_t> threads_record(const std::vector<ThreadInfo>& threads);
std::vector<std::uint8_t> sites_record(const std::vector<const CallSite*>& sites);
std::vector<std::uint8_t> names_record(const std::vector<const char*>& names);
std::vector<std::uint8_t> stats_record(const Stats& stats);
std::vector<std::uint8_t> window_record(std::uint64_t from_tick, std::uint64_t to_tick);
// A chunk's header; its bytes follow in the same record.
std::vector<std::uint8_t> chunk_header(const flight_events::Chunk& chunk);

// The readers of the records' bodies: false when a body is not what the writer wrote.
bool read_string(flight_events::ByteCursor& r, std::string* out);
bool read_info(flight_events::ByteCursor& r, TraceInfo* out);
bool read_time(flight_events::ByteCursor& r, TimeBase* out);
bool read_threads(flight_events::ByteCursor& r, std::vector<ThreadInfo>* out);
bool read_sites(flight_events::ByteCursor& r, std::vector<SiteText>* out);
bool read_names(flight_events::ByteCursor& r, std::vector<std::string>* out);
bool read_stats(flight_events::ByteCursor& r, Stats* out);
bool read_window(flight_events::ByteCursor& r, std::uint64_t* from_tick, std::uint64_t* to_tick);
// The header of a kChunk body; the cursor is left at the chunk's bytes.
bool read_chunk_header(flight_events::ByteCursor& r, flight_events::Chunk* out);

}  // namespace gpuprobe::formats::flight_window
