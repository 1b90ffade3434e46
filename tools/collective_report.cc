#include "tools/collective_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/collective_match.h"
#include "analysis/ranges_at.h"
#include "core/sink_registry.h"
#include "readers/torch_flight_recorder_reader.h"
#include "readers/trace_file.h"
#include "session/builtin_sinks.h"
#include "tools/commands/command.h"
#include "tools/torch_fr_overlay.h"

namespace gpuprobe::tools {
namespace {

// One rank's gpuprobe trace, read for what was open at the mismatch.
struct RankTimeline {
  RankTimeline(std::string f, std::int64_t at_ns) : file(std::move(f)), at(at_ns) {}
  std::string file;
  analysis::RangesAt at;
};

// The gpuprobe traces in `dir` (Chrome JSON or Perfetto, as `gpuprobe report DIR` takes them)
// that say which rank they are, read for time `at_ns`. A file that is not a trace is passed over.
std::vector<std::unique_ptr<RankTimeline>> timelines(const std::string& dir, std::int64_t at_ns) {
  std::vector<std::unique_ptr<RankTimeline>> out;
  for (const std::string& file : trace_files_in(dir)) {
    auto t = std::make_unique<RankTimeline>(file, at_ns);
    if (!readers::read_trace_file(t->file, t->at).ok() || t->at.rank() < 0) continue;
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a->at.rank() < b->at.rank(); });
  return out;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string where_text(const analysis::CollectiveSide& s) {
  return s.where.empty() ? std::string() : " at " + s.where;
}

// A missing rank's last operation, relative to when the first rank issued the mismatch.
void print_last_operation(const analysis::CollectiveSide& s, std::int64_t created_ns) {
  if (s.seq < 0 && s.name.empty()) {
    std::printf("  rank %d recorded no operation at all\n", s.rank);
    return;
  }
  std::printf(
      "  rank %d's last operation: %s %lld %s of process group %s%s, state %s, "
      "issued %.1f ms %s\n",
      s.rank, s.p2p ? "point-to-point" : "collective", static_cast<long long>(s.seq),
      s.name.c_str(), s.pg_name.c_str(), where_text(s).c_str(), s.state.c_str(),
      std::abs(analysis::ms(created_ns - s.created_ns)),
      s.created_ns <= created_ns ? "before" : "after");
}

void print_issued(const analysis::CollectiveSide& s) {
  std::printf("  rank %d issued %s %s %s%s, state %s\n", s.rank, s.name.c_str(),
              s.input_sizes.c_str(), s.input_dtypes.c_str(), where_text(s).c_str(),
              s.state.c_str());
}

void print_collective_mismatch(const analysis::GroupMatch& g) {
  if (g.desync) {
    std::printf(
        "\nfirst mismatch: process group %s (%s), collective %lld: ranks issued different "
        "operations\n",
        g.pg_name.c_str(), g.pg_desc.c_str(), static_cast<long long>(g.seq));
  } else {
    std::printf(
        "\nfirst mismatch: process group %s (%s), collective %lld: rank%s %s never joined\n",
        g.pg_name.c_str(), g.pg_desc.c_str(), static_cast<long long>(g.seq),
        g.missing.size() == 1 ? "" : "s", ranks_text(g.missing).c_str());
  }
  for (const analysis::CollectiveSide& s : g.joined) print_issued(s);
  for (const analysis::CollectiveSide& s : g.last_of_missing) print_last_operation(s, g.created_ns);
}

void print_p2p_mismatch(const analysis::GroupMatch& g) {
  const analysis::P2pMatch& p = g.p2p;
  std::printf(
      "\nfirst mismatch: process group %s (%s), point-to-point from rank %d to rank %d, "
      "operation %lld of the pair: ",
      g.pg_name.c_str(), g.pg_desc.c_str(), p.src, p.dst, static_cast<long long>(p.index + 1));
  if (p.kind == "unreceived") {
    std::printf("rank %d never posted the receive\n", p.dst);
  } else if (p.kind == "unsent") {
    std::printf("rank %d never sent it\n", p.src);
  } else {
    std::printf("the send and the receive differ in sizes or dtypes\n");
  }
  for (const analysis::CollectiveSide& s : p.sides) print_issued(s);
  if (p.kind != "desync") print_last_operation(p.last_of_missing, p.created_ns);
}

// Each rank's gpuprobe trace at `at_ns`, when the first rank issued the first mismatch.
void print_timelines(std::int64_t at_ns, const std::vector<std::unique_ptr<RankTimeline>>& traces) {
  if (traces.empty()) return;
  std::printf("on gpuprobe's timeline when the first rank issued it:\n");
  for (const auto& t : traces) {
    const analysis::RangesAt& at = t->at;
    const std::string file = std::filesystem::path(t->file).filename().string();
    if (at.first_ns() > at.last_ns()) {
      std::printf("  rank %d (%s): no events\n", at.rank(), file.c_str());
      continue;
    }
    if (at.last_ns() <= at_ns) {
      std::printf("  rank %d (%s): its trace ends %.1f ms before\n", at.rank(), file.c_str(),
                  analysis::ms(at_ns - at.last_ns()));
      continue;
    }
    if (at.open_ranges().empty())
      std::printf("  rank %d (%s): in no range\n", at.rank(), file.c_str());
    for (const analysis::RangesAt::Open& o : at.open_ranges())
      std::printf("  rank %d (%s): thread %s in \"%s\" (began %.1f ms before, lasted %.1f ms)\n",
                  at.rank(), file.c_str(), o.thread.c_str(), o.name.c_str(),
                  analysis::ms(at_ns - o.begin_ns), analysis::ms(o.end_ns - o.begin_ns));
    // What the rank went on to do: for one that never joined, often what it did instead.
    if (const auto& n = at.next_range(); !n.name.empty())
      std::printf("    next: thread %s began \"%s\" %.1f ms later (lasted %.1f ms)\n",
                  n.thread.c_str(), n.name.c_str(), analysis::ms(n.begin_ns - at_ns),
                  analysis::ms(n.end_ns - n.begin_ns));
  }
}

void print_text(const analysis::CollectiveMatch& m,
                const std::vector<std::unique_ptr<RankTimeline>>& traces) {
  std::printf("PyTorch flight recorder: ranks %s (dump version %s), %zu process group%s\n",
              ranks_text(m.ranks).c_str(), m.version.c_str(), m.groups.size(),
              m.groups.size() == 1 ? "" : "s");
  for (const analysis::GroupMatch& g : m.groups) {
    std::printf(
        "  process group %s (%s), ranks %s%s: collectives %lld..%lld held by every buffer, "
        "%lld joined alike by every rank",
        g.pg_name.c_str(), g.pg_desc.c_str(), ranks_text(g.members).c_str(),
        g.members_inferred ? " [as seen in the dumps]" : "", static_cast<long long>(g.first_seq),
        static_cast<long long>(g.last_seq), static_cast<long long>(g.matched));
    if (g.mismatch) std::printf(", collective %lld not", static_cast<long long>(g.seq));
    if (g.p2p.total > 0) {
      std::printf("; point-to-point: %lld sends met by their receives",
                  static_cast<long long>(g.p2p.matched));
      if (g.p2p.mismatch)
        std::printf(", not operation %lld from rank %d to rank %d",
                    static_cast<long long>(g.p2p.index + 1), g.p2p.src, g.p2p.dst);
      if (g.p2p.not_matched > 0)
        std::printf(", %lld operations not matched (%s)", static_cast<long long>(g.p2p.not_matched),
                    g.p2p.not_matched_why.c_str());
    }
    if (!g.without_dump.empty())
      std::printf("; no dump from rank %s, not judged", ranks_text(g.without_dump).c_str());
    std::printf("\n");
  }
  if (m.first_mismatch < 0) {
    std::vector<int> undumped;
    for (const analysis::GroupMatch& g : m.groups) {
      for (int r : g.without_dump) {
        if (std::find(undumped.begin(), undumped.end(), r) == undumped.end()) undumped.push_back(r);
      }
    }
    const bool p2p = std::any_of(m.groups.begin(), m.groups.end(),
                                 [](const analysis::GroupMatch& g) { return g.p2p.total > 0; });
    if (undumped.empty()) {
      std::printf("every rank joined every collective alike%s: no hang or desync among them\n",
                  p2p ? ", and every send met its receive" : "");
      // PyTorch's gloo backend records collectives only: a rank waiting in a receive shows no
      // trace of it in the dumps.
      if (m.backend == "gloo")
        std::printf(
            "(gloo's flight recorder keeps no sends or receives: a hang in one is not "
            "seen here)\n");
      return;
    }
    // A rank stuck in a collective, or killed, may be exactly the one that wrote no dump.
    std::sort(undumped.begin(), undumped.end());
    std::printf(
        "the ranks that dumped joined every collective alike; rank %s wrote no dump, so this does "
        "not rule out a hang: a rank stuck or killed may dump nothing (its stack, or a dump asked "
        "of it, would tell)\n",
        ranks_text(undumped).c_str());
    return;
  }
  const analysis::GroupMatch& g = m.groups[static_cast<std::size_t>(m.first_mismatch)];
  if (m.first_is_p2p) {
    print_p2p_mismatch(g);
  } else {
    print_collective_mismatch(g);
  }
  print_timelines(m.first_created_ns, traces);
}

// Each rank's trace in `dir` written into `merge_dir` with its flight recorder entries added.
// What it wrote goes to `log` (stderr when stdout holds JSON).
int merge_traces(const std::string& dir, const std::string& merge_dir,
                 const std::vector<formats::torch_fr::Dump>& dumps,
                 const analysis::CollectiveMatch& m, std::FILE* log) {
  std::error_code ec;
  std::filesystem::create_directories(merge_dir, ec);
  if (ec) return fail(Status::Error("cannot create '" + merge_dir + "': " + ec.message()));
  session::register_builtin_sinks();
  int merged = 0;
  for (const std::string& file : trace_files_in(dir)) {
    const std::string out =
        (std::filesystem::path(merge_dir) / std::filesystem::path(file).filename()).string();
    std::unique_ptr<Sink> sink;
    if (Status s = core::SinkRegistry::get().create(output_kind(out), out, &sink); !s.ok())
      return fail(s);
    TorchFrOverlay overlay(*sink, dumps, m);
    if (Status s = readers::read_trace_file(file, overlay); !s.ok()) return fail(s);
    if (!overlay.found()) {
      std::fprintf(log, "wrote %s: its rank has no flight recorder dump, nothing added\n",
                   out.c_str());
      continue;
    }
    ++merged;
    std::fprintf(log, "wrote %s: %lld flight recorder events added", out.c_str(),
                 static_cast<long long>(overlay.added()));
    if (overlay.outside() > 0)
      std::fprintf(log, " (%lld entries outside the trace's span left out)",
                   static_cast<long long>(overlay.outside()));
    std::fprintf(log, "\n");
  }
  if (merged == 0) {
    std::fprintf(stderr, "gpuprobe: %s holds no gpuprobe trace of a rank with a dump to merge\n",
                 dir.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int run_collective_report(const std::string& dir, bool json, const std::string& merge_dir) {
  std::vector<formats::torch_fr::Dump> dumps;
  if (Status s = readers::read_torch_fr_dir(dir, &dumps); !s.ok()) return fail(s);
  const analysis::CollectiveMatch m = analysis::match_collectives(dumps);
  std::vector<std::unique_ptr<RankTimeline>> traces;
  if (m.first_mismatch >= 0) traces = timelines(dir, m.first_created_ns);
  if (!json) {
    print_text(m, traces);
    return merge_dir.empty() ? 0 : merge_traces(dir, merge_dir, dumps, m, stdout);
  }
  nlohmann::json out = nlohmann::json::parse(analysis::collective_match_json(m));
  const auto range_json = [](const analysis::RangesAt::Open& o) -> nlohmann::json {
    if (o.name.empty()) return nullptr;
    return {{"thread", o.thread}, {"name", o.name}, {"begin_ns", o.begin_ns}, {"end_ns", o.end_ns}};
  };
  nlohmann::json timeline = nlohmann::json::array();
  for (const auto& t : traces) {
    nlohmann::json open = nlohmann::json::array();
    for (const analysis::RangesAt::Open& o : t->at.open_ranges()) open.push_back(range_json(o));
    timeline.push_back({{"rank", t->at.rank()},
                        {"file", t->file},
                        {"open", open},
                        {"next", range_json(t->at.next_range())},
                        {"first_ns", t->at.first_ns()},
                        {"last_ns", t->at.last_ns()}});
  }
  out["timeline"] = timeline;
  std::printf("%s\n", out.dump().c_str());
  return merge_dir.empty() ? 0 : merge_traces(dir, merge_dir, dumps, m, stderr);
}

}  // namespace gpuprobe::tools
