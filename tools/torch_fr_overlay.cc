#include "tools/torch_fr_overlay.h"

#include <algorithm>

namespace gpuprobe::tools {
namespace {

namespace fr = formats::torch_fr;

// Thread ids for the recorder's tracks: above any Linux thread id (at most 2^22), so that they
// never take a recorded thread's place in a viewer.
constexpr std::int64_t kFirstTid = 0x7f000000;

std::string entry_name(const fr::Entry& e) {
  const bool p2p = analysis::is_point_to_point(e);
  return e.profiling_name + (p2p ? " (p2p " : " (collective ") +
         std::to_string(p2p ? e.p2p_seq_id : e.collective_seq_id) + ")";
}

std::string mismatch_name(const analysis::CollectiveMatch& m) {
  const analysis::GroupMatch& g = m.groups[static_cast<std::size_t>(m.first_mismatch)];
  if (m.first_is_p2p) {
    const analysis::P2pMatch& p = g.p2p;
    const std::string what = p.kind == "unreceived" ? "never received"
                             : p.kind == "unsent"   ? "never sent"
                                                    : "sent and received differently";
    return "first mismatch: rank " + std::to_string(p.src) + " to rank " + std::to_string(p.dst) +
           ", operation " + std::to_string(p.index + 1) + ": " + what;
  }
  if (g.desync)
    return "first mismatch: collective " + std::to_string(g.seq) +
           ": ranks issued different "
           "operations";
  std::string ranks;
  for (int r : g.missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  return "first mismatch: collective " + std::to_string(g.seq) + ": rank " + ranks +
         " never joined";
}

}  // namespace

void TorchFrOverlay::find_dump(int rank) {
  for (const fr::Dump& d : dumps_)
    if (d.rank == rank && rank >= 0) dump_ = &d;
}

Status TorchFrOverlay::open(const TraceInfo& info) {
  find_dump(info.rank);
  return out_.open(info);
}

void TorchFrOverlay::update_info(const TraceInfo& info) {
  if (dump_ == nullptr) find_dump(info.rank);  // a Perfetto trace states its rank at its end
  out_.update_info(info);
}

Status TorchFrOverlay::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    any_ = true;
    first_tick_ = std::min(first_tick_, e.begin);
    last_tick_ = std::max(last_tick_, e.end);
  }
  return out_.write(batch);
}

const CallSite* TorchFrOverlay::site(std::string name) {
  names_.push_back(std::move(name));
  sites_.push_back({names_.back().c_str(), "", "", 0, 0, Category::kApp});
  return &sites_.back();
}

Status TorchFrOverlay::close(const Stats& stats, const TimeBase& time) {
  if (!any_ || dump_ == nullptr) return out_.close(stats, time);
  const std::int64_t first_ns = time.wall_ns(first_tick_), last_ns = time.wall_ns(last_tick_);
  Stats out_stats = stats;
  std::vector<Event> events;
  // A thread per process group of the match that this rank's dump has entries of.
  for (const analysis::GroupMatch& g : match_.groups) {
    const std::uint32_t thread = static_cast<std::uint32_t>(out_stats.threads.size());
    std::uint64_t written = 0;
    const auto add = [&](Event e) {
      events.push_back(e);
      ++written;
    };
    for (const fr::Entry& e : dump_->entries) {
      if (e.pg_name != g.pg_name) continue;
      if (e.time_created_ns < first_ns || e.time_created_ns > last_ns) {
        ++outside_;
        continue;
      }
      const std::uint64_t at = time.ticks_at(e.time_created_ns);
      add({EventType::kInstant, thread, site(entry_name(e)), at, at, 0.0});
      // Issued, and neither seen completed nor retired when the recorder dumped: still waiting.
      if (e.state != "completed" && !e.retired)
        add({EventType::kRange, thread, site("waiting since issued: " + entry_name(e)), at,
             last_tick_, 0.0});
    }
    const bool here = match_.first_mismatch >= 0 &&
                      &match_.groups[static_cast<std::size_t>(match_.first_mismatch)] == &g;
    if (here && match_.first_created_ns >= first_ns && match_.first_created_ns <= last_ns) {
      const std::uint64_t at = time.ticks_at(match_.first_created_ns);
      add({EventType::kInstant, thread, site(mismatch_name(match_)), at, at, 0.0});
    }
    if (written == 0) continue;
    ThreadInfo t;
    t.os_tid = kFirstTid + static_cast<std::int64_t>(thread - stats.threads.size());
    t.name = "PyTorch flight recorder: process group " + g.pg_name + " (" + g.pg_desc + ")";
    t.written = written;
    out_stats.threads.push_back(std::move(t));
    out_stats.written += written;
  }
  added_ = static_cast<std::int64_t>(events.size());
  if (!events.empty()) {
    EventBatch batch;
    batch.events = events.data();
    batch.size = events.size();
    batch.time = &time;
    batch.threads = &out_stats.threads;
    if (Status s = out_.write(batch); !s.ok()) return s;
  }
  return out_.close(out_stats, time);
}

}  // namespace gpuprobe::tools
