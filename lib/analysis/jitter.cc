#include "analysis/jitter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"

#include "analysis/allocator_call.h"
#include "analysis/compile.h"
#include "formats/category_names.h"
#include "formats/compile_marks.h"
#include "formats/framework_events.h"
#include "formats/kineto.h"
#include "formats/steps.h"

namespace gpuprobe::analysis {
namespace {

constexpr const char* kCauseNames[] = {"gc pause", "compile", "allocator", "synchronization",
                                       "large copy"};

}  // namespace

const char* Jitter::cause_name(int cause) { return kCauseNames[cause]; }

void Jitter::add(const ReportEvent& r) {
  const Event& e = *r.event;
  const Interval span{r.begin_ns, r.end_ns};
  switch (e.type) {
    case EventType::kGpu: {
      const GpuActivity& a = *e.gpu;
      if (a.kind == GpuActivityKind::kMemcpy &&
          a.bytes >= static_cast<std::uint64_t>(options_.large_copy_bytes)) {
        causes_[kLargeCopy].push_back(span);
      } else if (a.kind == GpuActivityKind::kSync) {
        causes_[kSync].push_back(span);
      } else if (a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi) {
        if (a.name != nullptr && formats::api_role(a.name) == formats::ApiRole::kSync)
          causes_[kSync].push_back(span);
        if (allocator_call(a.name) != AllocatorCall::kNone) causes_[kAllocator].push_back(span);
      }
      break;
    }
    case EventType::kCounter:
      // An allocator retry flushes the cache and synchronizes: a cause, at the moment counted.
      if (e.site->category != Category::kCompile &&
          std::strcmp(e.site->name, formats::framework_events::kAllocRetries) == 0)
        causes_[kAllocator].push_back({r.begin_ns, r.begin_ns + 1});
      break;
    case EventType::kRange:
      if (r.row == nullptr) break;  // not a CPU range
      if (e.site->category == Category::kGc) {
        causes_[kGc].push_back(span);
        if (gc_pauses_.size() < kMaxCompiles) gc_pauses_.push_back({span, e.site->name});
      }
      if (is_frame_compile(*e.site) || is_other_compile(*e.site)) {
        causes_[kCompile].push_back(span);
        if (compiles_.size() < kMaxCompiles) compiles_.push_back({span, e.site->name});
      }
      break;
    case EventType::kInstant:
      if (formats::RecompileMark m;
          e.site->category == Category::kCompile && recompile_reasons_.size() < kMaxCompiles &&
          formats::parse_recompile_mark(e.site->name, &m) && !m.reason.empty())
        recompile_reasons_[std::string(m.compile_id)] = m.reason;
      break;
    default:
      break;
  }
}

// The compiles within [begin, end): each by name, and why it ran — a recompile's failed guard,
// or that it was the frame's first compile.
std::string Jitter::compile_detail(std::int64_t begin, std::int64_t end) const {
  namespace fe = formats::framework_events;
  std::string out;
  int named = 0, more = 0;
  for (const NamedSpan& c : compiles_) {
    if (c.span.end <= begin || c.span.begin >= end) continue;
    if (named == 3) {
      ++more;
      continue;
    }
    ++named;
    out += (out.empty() ? "" : "; ") + c.name;
    if (c.name.rfind(fe::kCompile, 0) != 0) continue;  // JAX's, Triton's: the name says it
    const std::string id = c.name.substr(sizeof fe::kCompile - 1);
    const auto reason = recompile_reasons_.find(id);
    if (reason != recompile_reasons_.end()) {
      out += ", a recompile: " + reason->second.substr(0, 200);
    } else if (id.size() > 2 && id.compare(id.size() - 2, 2, "/0") == 0) {
      out += ", the frame's first compile";
    }
  }
  if (more > 0) out += absl::StrFormat("; and %d more", more);
  return out;
}

std::string Jitter::gc_detail(std::int64_t begin, std::int64_t end,
                              std::map<std::string, std::uint64_t>* all) const {
  std::map<std::string, std::uint64_t> here;
  for (const NamedSpan& g : gc_pauses_) {
    if (g.span.end > begin && g.span.begin < end) ++here[g.name];
  }
  std::string out;
  for (const auto& [name, n] : here) {
    out += absl::StrFormat("%s%s x%llu", out.empty() ? "" : ", ", name,
                           static_cast<unsigned long long>(n));
    (*all)[name] += n;
  }
  return out;
}

bool Jitter::program_category(Category c) {
  return c == Category::kApp || c == Category::kPython || c == Category::kStep ||
         (c >= Category::kUser0 && c <= Category::kUser7);
}

bool Jitter::module_range_name(std::string_view name) {
  // A module's class or its path in the model ("ResNet", "GPT2LMHeadModel.transformer.h.0"), as
  // gpuprobe.torch.instrument and `gpuprobe run` name module ranges: an identifier, then
  // identifiers or indices after dots — which no torch operator ("aten::mm"), step or
  // data-loading range is.
  bool first = true;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view part = name.substr(start, dot - start);
    if (part.empty()) return false;
    bool identifier = !(part[0] >= '0' && part[0] <= '9');
    bool index = true;
    for (const char c : part) {
      const bool digit = c >= '0' && c <= '9';
      identifier =
          identifier && (digit || c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'));
      index = index && digit;
    }
    if (!identifier && (first || !index)) return false;
    if (dot == name.size()) return true;
    first = false;
    start = dot + 1;
  }
}

const NameStats* Jitter::target(std::string* why) const {
  std::string ignored;
  std::string& reason = why != nullptr ? *why : ignored;
  constexpr std::uint64_t kRepeats = 20;
  if (!options_.latency_name.empty()) {
    const NameStats* named = names_.range(options_.latency_name);
    reason = named != nullptr ? "chosen with --latency" : "--latency names no range of the trace";
    return named;
  }
  if (const NameStats* steps = names_.range(formats::kStepName)) {
    reason = "the steps (ProfilerStep#N): --latency NAME explains another range";
    return steps;
  }
  // By total time: the heaviest of the program's own top-level ranges; the heavier ranges passed
  // over are named, so that a reader sees what was not taken and why.
  const NameStats* passed = nullptr;
  for (const NameStats* s : names_.result().ranges) {
    if (!program_category(s->category)) {
      if (passed == nullptr && s->count >= kRepeats) passed = s;
      continue;
    }
    if (s->top_level < kRepeats || s->top_level * 2 < s->count) continue;
    reason = absl::StrFormat(
        "the heaviest range of the program's own (category %s) at the top level of its thread, "
        "%llu times",
        formats::default_category_name(s->category), static_cast<unsigned long long>(s->count));
    if (passed != nullptr) {
      reason += absl::StrFormat(
          "; not \"%s\" (category %s), heavier but %s's own", passed->name,
          formats::default_category_name(passed->category),
          passed->category == Category::kCompile ? "the compiler" : "the framework");
    }
    reason += "; --latency NAME explains another range";
    return s;
  }
  // A program that records no range of its own (traced by `gpuprobe run`, or instrumented with
  // gpuprobe.torch.instrument only): its model's outermost forward, the heaviest module range at
  // the top level of its thread.
  for (const NameStats* s : names_.result().ranges) {
    if (s->category != Category::kTorch || !module_range_name(s->name)) continue;
    if (s->top_level < kRepeats || s->top_level * 2 < s->count) continue;
    reason = absl::StrFormat(
        "the heaviest module forward (category torch) at the top level of its thread, %llu "
        "times: the program has no repeated range of its own; --latency NAME explains another "
        "range",
        static_cast<unsigned long long>(s->count));
    return s;
  }
  reason =
      "no range of the program's own (category app, python or user) repeats 20 times at the top "
      "level of its thread";
  if (passed != nullptr) {
    reason += absl::StrFormat(" (framework ranges such as \"%s\", category %s, are not taken)",
                              passed->name, formats::default_category_name(passed->category));
  }
  reason += ": --latency NAME picks one";
  return nullptr;
}

void Jitter::finish(const TraceContext& trace) {
  JitterResult& r = result_;
  const NameStats* target = this->target(&r.latency_reason);
  if (target == nullptr) return;
  r.latency_name = target->name;
  r.latency_count = target->count;
  std::vector<NameStats::Instance> slow = target->slowest;
  std::sort(slow.begin(), slow.end(),
            [](const auto& a, const auto& b) { return a.end - a.begin > b.end - b.begin; });
  // P99 exactly when the slowest kept include its rank (they do up to 100 x keep_slowest
  // instances), else from the histogram; outliers are strictly slower, so a flat distribution
  // has none.
  const std::size_t p99_from_top =
      target->count -
      static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(target->count)));
  std::int64_t threshold = static_cast<std::int64_t>(target->quantile_ns(0.99));
  if (options_.outlier_threshold_ms > 0) {
    r.threshold_given = true;
    threshold = static_cast<std::int64_t>(options_.outlier_threshold_ms * 1e6);
  } else if (p99_from_top < slow.size()) {
    threshold = slow[p99_from_top].end - slow[p99_from_top].begin;
  }
  r.outlier_threshold_ms = static_cast<double>(threshold) * 1e-6;
  r.latency_p50_ms = target->quantile_ns(0.5) * 1e-6;
  r.latency_p99_ms = target->quantile_ns(0.99) * 1e-6;
  // The histogram in about 40 bins: its buckets (32 per doubling) merged evenly.
  const LogHistogram& h = *target->histogram;
  int first = -1, last = -1;
  for (int b = 0; b < LogHistogram::kBuckets; ++b) {
    if (h.count(b) == 0) continue;
    if (first < 0) first = b;
    last = b;
  }
  const int per_bin = std::max(1, (last - first + 1 + 39) / 40);
  for (int b = first; b >= 0 && b <= last; b += per_bin) {
    std::uint64_t n = 0;
    for (int k = b; k < b + per_bin && k <= last; ++k) n += h.count(k);
    r.latency_histogram.emplace_back(
        std::exp2(static_cast<double>(b + per_bin) / LogHistogram::kPerOctave) * 1e-6, n);
  }
  for (auto& c : causes_) merge(c);
  const std::vector<Interval>& gpu_work = gpu_.gpu_work();
  // Recorded causes, then the derived ones. The CPU gap needs children to mean something: a
  // range with none is all self time. Its cause: uninstrumented code, a lock or GIL wait, or the
  // thread descheduled — which the scheduler's counters (sched=) tell apart: the time the thread
  // waited for a CPU, and the time it was blocked, are named for what they are and taken out of
  // the gap.
  enum { kGpuIdle = kCauses, kCpuGap, kWaiting, kBlocked, kAllCauses };
  std::vector<CauseOverlap> summary(kAllCauses);
  for (int c = 0; c < kCauses; ++c) summary[c].cause = kCauseNames[c];
  summary[kGpuIdle].cause = "GPU idle";
  summary[kCpuGap].cause = "CPU gap";
  summary[kWaiting].cause = "waiting for a CPU";
  summary[kBlocked].cause = "blocked";
  const bool has_children = target->self_ns < target->total_ns && target->self_histogram;
  const auto typical_self =
      has_children ? static_cast<std::int64_t>(target->self_histogram->quantile_ns(0.5)) : 0;
  const std::vector<ThreadInfo>& threads = trace.stats->threads;
  std::map<std::string, std::uint64_t> gc_names;  // the outliers' GC pauses, by name
  for (const auto& inst : slow) {
    if (inst.end - inst.begin <= threshold) break;
    Outlier o;
    o.begin_ns = inst.begin;
    o.duration_ns = inst.end - inst.begin;
    const std::int64_t excess = std::max<std::int64_t>(
        o.duration_ns - static_cast<std::int64_t>(target->quantile_ns(0.5)), 0);
    r.excess_ns += excess;
    o.excess_ns = excess;
    o.thread = inst.thread < threads.size() ? threads[inst.thread].name : "";
    o.children = deviating_children(names_, target, inst.thread, inst.begin, inst.end, excess);
    const auto note = [&](int cause, std::int64_t ns, std::uint64_t n, std::string detail = {}) {
      o.causes.push_back({summary[cause].cause, ns, n, 0, std::move(detail)});
      summary[cause].overlap_ns += ns;
      summary[cause].explained_ns += std::min(ns, excess);
      summary[cause].events += n;
    };
    for (int c = 0; c < kCauses; ++c) {
      const auto [covered, n] = overlap(causes_[c], inst.begin, inst.end);
      if (n == 0) continue;
      note(c, covered, n,
           c == kCompile ? compile_detail(inst.begin, inst.end)
           : c == kGc    ? gc_detail(inst.begin, inst.end, &gc_names)
                         : "");
    }
    if (!gpu_work.empty()) {
      const std::int64_t idle = o.duration_ns - overlap(gpu_work, inst.begin, inst.end).first;
      if (idle > 0) note(kGpuIdle, idle, 1);
    }
    // Named when it is at least 1 % of the outlier and beyond the median's precision (a
    // histogram bucket's middle, within 1.1 %).
    std::int64_t gap = inst.self_ns - typical_self;
    o.os_tid = inst.thread < threads.size() ? threads[inst.thread].os_tid : 0;
    const CpuSplit cpu = cpu_.split(o.os_tid, inst.begin, inst.end);
    if (cpu.known) {
      // Named from 1 ms and a tenth of the outlier: a request is always off a CPU a little.
      const std::int64_t floor = std::max<std::int64_t>(1'000'000, o.duration_ns / 10);
      if (cpu.waiting_ns >= floor) {
        note(kWaiting, cpu.waiting_ns, 1, "runnable, but the CPUs were busy (preempted)");
        gap -= cpu.waiting_ns;
      }
      if (cpu.blocked_ns >= floor) {
        std::string why;
        // Named from a quarter of the blocked time: in a convoy the rest is spent behind the
        // waiters ahead, each holding the lock in turn (counted as other waiters).
        if (cpu.holder_overlap_ns * 4 >= cpu.blocked_ns) {
          o.blocked_behind = {cpu.holder_range,      cpu.holder_thread,     cpu.holder_overlap_ns,
                              cpu.holder_running_ns, cpu.holder_waiting_ns, cpu.other_waiters};
          // A holder asleep in its range (a lock held across I/O or a sleep) did not run; one
          // runnable (on a CPU or waiting for one) while this thread was blocked, half that
          // time at least, did: the GIL's holder runs while its waiters are blocked.
          const std::int64_t active = cpu.holder_running_ns + cpu.holder_waiting_ns;
          const std::int64_t during = std::min(cpu.holder_overlap_ns, cpu.blocked_ns);
          const bool ran = cpu.holder_running_ns < 0 || active * 2 >= during;
          why = "while \"" + cpu.holder_range + "\" " + (ran ? "ran" : "was open, off a CPU,") +
                " on " + cpu.holder_thread + " (" +
                absl::StrFormat("%.1f ms", ms(cpu.holder_overlap_ns)) + " of it";
          // A holder that itself waited for a CPU more than it ran: the CPUs were the bottleneck.
          if (ran && cpu.holder_waiting_ns > cpu.holder_running_ns)
            why += absl::StrFormat(", on a CPU %.1f ms and waiting for one %.1f ms",
                                   ms(cpu.holder_running_ns), ms(cpu.holder_waiting_ns));
          why += ")";
          if (cpu.other_waiters > 0)
            why += absl::StrFormat(", waiting behind %d other waiter%s", cpu.other_waiters,
                                   cpu.other_waiters == 1 ? "" : "s");
        }
        if (cpu.busiest_running_ns * 2 >= cpu.blocked_ns) {
          why += std::string(why.empty() ? "while " : "; ") + cpu.busiest_thread +
                 " was on a CPU " + absl::StrFormat("%.1f ms", ms(cpu.busiest_running_ns)) +
                 " (a lock it held, or Python's GIL)";
        }
        note(kBlocked, cpu.blocked_ns, 1, why.empty() ? "a lock, I/O or sleep" : why);
        gap -= cpu.blocked_ns;
      }
    }
    if (has_children && gap > typical_self / 40 && gap * 100 >= o.duration_ns)
      note(kCpuGap, gap, 1);
    std::sort(o.causes.begin(), o.causes.end(), [](const CauseOverlap& a, const CauseOverlap& b) {
      return a.overlap_ns > b.overlap_ns;
    });
    r.outliers.push_back(std::move(o));
  }
  for (const auto& [name, n] : gc_names) {
    summary[kGc].detail += absl::StrFormat("%s%s x%llu", summary[kGc].detail.empty() ? "" : ", ",
                                           name, static_cast<unsigned long long>(n));
  }
  for (const CauseOverlap& c : summary) {
    if (c.events > 0) r.cause_summary.push_back(c);
  }
  std::sort(
      r.cause_summary.begin(), r.cause_summary.end(),
      [](const CauseOverlap& a, const CauseOverlap& b) { return a.overlap_ns > b.overlap_ns; });
}

void Jitter::write_json(const TraceContext& trace, nlohmann::json* report) const {
  using nlohmann::json;
  const auto causes = [](const std::vector<CauseOverlap>& cs) {
    json a = json::array();
    for (const CauseOverlap& c : cs) {
      a.push_back({{"cause", c.cause}, {"overlap_ms", ms(c.overlap_ns)}, {"events", c.events}});
      if (!c.detail.empty()) a.back()["detail"] = c.detail;
    }
    return a;
  };
  json summary = causes(result_.cause_summary);
  for (std::size_t i = 0; i < summary.size(); ++i) {
    summary[i]["share_of_excess"] =
        result_.excess_ns > 0 ? static_cast<double>(result_.cause_summary[i].explained_ns) /
                                    static_cast<double>(result_.excess_ns)
                              : 0.0;
  }
  json outliers = json::array();
  for (const Outlier& o : result_.outliers) {
    outliers.push_back({{"start_ms", ms(o.begin_ns - trace.start_ns)},
                        {"duration_ms", ms(o.duration_ns)},
                        {"excess_ms", ms(o.excess_ns)},
                        {"thread", o.thread},
                        {"causes", causes(o.causes)},
                        {"children", deviations_json(o.children, o.excess_ns, trace.start_ns)}});
    if (const BlockedBehind& b = o.blocked_behind; !b.range.empty()) {
      outliers.back()["blocked_behind"] = {
          {"range", b.range},
          {"thread", b.thread},
          {"overlap_ms", ms(b.overlap_ns)},
          {"on_cpu_ms", b.on_cpu_ns >= 0 ? json(ms(b.on_cpu_ns)) : json(nullptr)},
          {"waiting_for_cpu_ms", b.waiting_ns >= 0 ? json(ms(b.waiting_ns)) : json(nullptr)},
          {"other_waiters", b.other_waiters}};
    }
  }
  (*report)["jitter"] = {{"range", result_.latency_name},
                         {"range_reason", result_.latency_reason},
                         {"threshold_ms", result_.outlier_threshold_ms},
                         {"outliers", outliers},
                         {"excess_ms", ms(result_.excess_ns)},
                         {"summary", summary}};
}

namespace {

// An outlier's deviating ranges, indented by their depth: what took longer than its own median.
void describe_deviations(const std::vector<Deviation>& ds, std::int64_t excess, int indent,
                         Section* s) {
  for (const Deviation& d : ds) {
    s->line(indent, absl::StrFormat("%s %.3f ms (its median %.3f ms): +%.3f ms, %.0f%% of the "
                                    "excess",
                                    d.name, ms(d.duration_ns), ms(d.median_ns), ms(d.excess_ns),
                                    excess > 0 ? 100.0 * static_cast<double>(d.excess_ns) /
                                                     static_cast<double>(excess)
                                               : 0.0));
    describe_deviations(d.children, excess, indent + 1, s);
  }
}

}  // namespace

Section describe_jitter(const JitterResult& j, std::int64_t trace_start_ns, bool any_ranges,
                        const std::vector<std::string>& outlier_notes, const TextOptions& options) {
  Section s("jitter");
  if (j.latency_name.empty()) {
    if (any_ranges) s.line(0, absl::StrFormat("jitter: no range explained: %s", j.latency_reason));
    return s;
  }
  s.line(0, absl::StrFormat("jitter: %u outliers of \"%s\" above %.3f ms", j.outliers.size(),
                            j.latency_name, j.outlier_threshold_ms));
  s.line(1, absl::StrFormat("why \"%s\": %s", j.latency_name, j.latency_reason));
  if (j.outliers.empty() && j.latency_count < 100) {
    s.line(1, absl::StrFormat("(of %u instances the P99 is the slowest itself: --threshold-ms MS "
                              "sets the bar)",
                              j.latency_count));
  }
  std::size_t n = 0;
  for (const Outlier& out : j.outliers) {
    if (n++ == options.limit) break;
    std::string text = absl::StrFormat("%9.3f ms at +%.3f ms (%s):", ms(out.duration_ns),
                                       ms(out.begin_ns - trace_start_ns), out.thread);
    if (out.causes.empty() && out.children.empty()) text += " nothing recorded overlaps it";
    for (const CauseOverlap& c : out.causes)
      absl::StrAppendFormat(&text, "  %s %.3f ms", c.cause, ms(c.overlap_ns));
    s.line(1, std::move(text));
    for (const CauseOverlap& c : out.causes) {
      if (!c.detail.empty()) s.line(2, absl::StrFormat("%s: %s", c.cause, c.detail));
    }
    describe_deviations(out.children, out.excess_ns, 2, &s);
    if (n - 1 < outlier_notes.size() && !outlier_notes[n - 1].empty())
      s.line(2, outlier_notes[n - 1]);
  }
  if (!j.cause_summary.empty()) {
    // Each cause's share of the outliers' time above their median: causes can overlap one
    // another (a compile inside a CPU gap), so the shares need not add up to 100 %.
    std::string text =
        absl::StrFormat("across outliers (%.3f ms above the median in all):", ms(j.excess_ns));
    for (const CauseOverlap& c : j.cause_summary) {
      absl::StrAppendFormat(&text, "  %s %.3f ms (%u) %.0f%%", c.cause, ms(c.overlap_ns), c.events,
                            j.excess_ns > 0 ? 100.0 * static_cast<double>(c.explained_ns) /
                                                  static_cast<double>(j.excess_ns)
                                            : 0.0);
    }
    s.line(1, std::move(text));
  }
  return s;
}

}  // namespace gpuprobe::analysis
