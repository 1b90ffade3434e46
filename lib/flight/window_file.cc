#include "flight/window_file.h"

#include <algorithm>
#include <string_view>

#include "base/output_file.h"
#include "formats/flight_window.h"

namespace gpuprobe::flight {
namespace {

namespace fw = formats::flight_window;

// The tables of the extra chunk: the snapshot's, and the sites only the extra events have.
struct ExtraTables {
  std::vector<const CallSite*>* sites;
  std::uint32_t site_index(const CallSite* site) {
    const auto it = std::find(sites->begin(), sites->end(), site);
    if (it != sites->end()) return static_cast<std::uint32_t>(it - sites->begin());
    sites->push_back(site);
    return static_cast<std::uint32_t>(sites->size() - 1);
  }
  std::uint32_t name_index(const char*) { return 0; }  // the extra events are not GPU work
};

Status write_bytes(base::OutputFile& file, const std::vector<std::uint8_t>& bytes) {
  return file.write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace

Status write_window_file(const std::string& path, const StoreSnapshot& snapshot,
                         const std::vector<Event>& extra, const WindowFacts& facts) {
  std::vector<const CallSite*> sites = snapshot.sites;
  Chunk added;
  ExtraTables tables{&sites};
  std::uint64_t prev = 0;
  for (const Event& e : extra) {
    if (e.type == EventType::kGpu) continue;
    if (added.events == 0) added.first_tick = prev = e.begin;
    formats::flight_events::encode_event(e, prev, tables, &added.bytes);
    prev = e.begin;
    added.min_tick = std::min(added.min_tick, e.begin);
    added.max_tick = std::max(added.max_tick, std::max(e.begin, e.end));
    ++added.events;
  }

  std::vector<std::uint8_t> head(std::begin(fw::kMagic), std::end(fw::kMagic));
  formats::flight_events::put_varint(&head, fw::kVersion);
  fw::put_record(&head, fw::kInfo, fw::info_record(facts.info));
  fw::put_record(&head, fw::kTime, fw::time_record(facts.time));
  fw::put_record(&head, fw::kThreads, fw::threads_record(facts.stats.threads));
  fw::put_record(&head, fw::kSites, fw::sites_record(sites));
  fw::put_record(&head, fw::kNames, fw::names_record(snapshot.names));
  fw::put_record(&head, fw::kStats, fw::stats_record(facts.stats));
  fw::put_record(&head, fw::kWindow, fw::window_record(facts.from_tick, facts.to_tick));

  base::OutputFile file;
  Status s = file.open(path);
  if (s.ok()) s = write_bytes(file, head);
  const auto write_chunk = [&](const Chunk& chunk) {
    std::vector<std::uint8_t> header = fw::chunk_header(chunk);
    std::vector<std::uint8_t> prefix;
    formats::flight_events::put_varint(&prefix, fw::kChunk);
    formats::flight_events::put_varint(&prefix, header.size() + chunk.bytes.size());
    prefix.insert(prefix.end(), header.begin(), header.end());
    Status w = write_bytes(file, prefix);
    return w.ok() ? write_bytes(file, chunk.bytes) : w;
  };
  for (const std::shared_ptr<const Chunk>& chunk : snapshot.chunks) {
    if (!s.ok()) break;
    if (chunk->max_tick < facts.from_tick || chunk->min_tick > facts.to_tick) continue;
    s = write_chunk(*chunk);
  }
  if (s.ok() && added.events > 0) s = write_chunk(added);
  if (s.ok()) {
    std::vector<std::uint8_t> end;
    fw::put_record(&end, fw::kEnd, {});
    s = write_bytes(file, end);
  }
  if (s.ok()) return file.commit();
  file.discard();
  return s;
}

}  // namespace gpuprobe::flight
