#include "flight/triggers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "formats/compile_marks.h"
#include "formats/dump_description.h"

namespace gpuprobe::flight {
namespace {

namespace dd = formats::dump_description;

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string ms_text(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", ms(ns));
  return buf;
}

std::string seconds_text(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ns) / 1e9);
  return buf;
}

}  // namespace

RangeTriggers::RangeTriggers(const std::vector<TriggerSpec>& specs) {
  for (const TriggerSpec& spec : specs) {
    if (spec.kind == TriggerSpec::Kind::kSignal) continue;
    recompile_triggers_ |= spec.kind == TriggerSpec::Kind::kRecompile;
    Watched w{&spec, RollingQuantile(spec.window_ns > 0 ? spec.window_ns : 1'000'000'000)};
    if (spec.kind == TriggerSpec::Kind::kPercentile) {
      // Fewer samples than this and the quantile is the maximum: one slow range would fire it.
      w.min_samples = static_cast<std::uint64_t>(std::ceil(1 / (1 - spec.quantile) - 1e-9));
    }
    watched_.push_back(std::move(w));
  }
}

const std::vector<std::uint32_t>& RangeTriggers::watchers_of(const CallSite* site) {
  const auto it = by_site_.find(site);
  if (it != by_site_.end()) return it->second;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < watched_.size(); ++i) {
    if (site->name != nullptr && watched_[i].spec->kind != TriggerSpec::Kind::kRecompile &&
        watched_[i].spec->name == site->name)
      ids.push_back(i);
  }
  return by_site_.emplace(site, std::move(ids)).first->second;
}

void RangeTriggers::observe(const EventBatch& batch, std::vector<Firing>* fired) {
  if (watched_.empty() || batch.time == nullptr) return;
  const TimeBase& time = *batch.time;
  std::uint64_t latest = 0;
  std::uint32_t latest_thread = 0;
  std::vector<Recompile> recompiles;
  for (const Event& e : batch) {
    if (recompile_triggers_ && e.type == EventType::kInstant && e.site != nullptr &&
        e.site->category == Category::kCompile && e.site->name != nullptr) {
      if (formats::RecompileMark mark; formats::parse_recompile_mark(e.site->name, &mark)) {
        recompiles.push_back(
            {std::string(mark.compile_id) + ": " + std::string(mark.reason), e.begin, e.thread});
      }
    }
    if (e.type != EventType::kRange || e.site == nullptr) continue;
    for (const std::uint32_t i : watchers_of(e.site)) {
      Watched& w = watched_[i];
      const std::int64_t duration = time.duration_ns(e.begin, e.end);
      if (w.spec->kind == TriggerSpec::Kind::kSlow) {
        if (duration > w.spec->threshold_ns && duration > w.slowest_ns) {
          w.slowest_ns = duration;
          w.slowest_tick = e.end;
          w.slowest_thread = e.thread;
        }
      } else {
        w.window.add(time.wall_ns(e.end), duration);
        w.touched = true;
        if (e.end > latest) latest = e.end, latest_thread = e.thread;
      }
    }
  }
  if (!recompiles.empty()) observe_recompiles(time, recompiles, fired);
  for (Watched& w : watched_) {
    const TriggerSpec& spec = *w.spec;
    if (spec.kind == TriggerSpec::Kind::kRecompile) continue;
    if (spec.kind == TriggerSpec::Kind::kSlow) {
      if (w.slowest_ns == 0) continue;
      Firing f;
      f.spec = &spec;
      f.reason = spec.name + " took " + ms_text(w.slowest_ns) + " > " + ms_text(spec.threshold_ns);
      f.at_tick = w.slowest_tick;
      f.thread = w.slowest_thread;
      f.values = {{dd::kDurationMs, ms(w.slowest_ns)}, {dd::kThresholdMs, ms(spec.threshold_ns)}};
      fired->push_back(std::move(f));
      w.slowest_ns = 0;
      continue;
    }
    if (!w.touched) continue;
    w.touched = false;
    const std::int64_t now = time.wall_ns(latest);
    const std::uint64_t n = w.window.count(now);
    const std::int64_t q = w.window.quantile(now, spec.quantile);
    const bool above = n >= w.min_samples && q > spec.threshold_ns;
    if (above && !w.above) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "p%g", spec.quantile * 100);
      Firing f;
      f.spec = &spec;
      f.reason = std::string(pct) + " of " + spec.name + " over the last " +
                 seconds_text(spec.window_ns) + " is " + ms_text(q) + " > " +
                 ms_text(spec.threshold_ns) + " (" + std::to_string(n) + " ranges)";
      f.at_tick = latest;
      f.thread = latest_thread;
      f.values = {{"quantile", spec.quantile},
                  {"value_ms", ms(q)},
                  {dd::kThresholdMs, ms(spec.threshold_ns)},
                  {dd::kWindowS, static_cast<double>(spec.window_ns) / 1e9},
                  {"samples", static_cast<double>(n)},
                  {"max_ms", ms(w.window.max(now))}};
      fired->push_back(std::move(f));
    }
    w.above = above;
  }
}

void RangeTriggers::observe_recompiles(const TimeBase& time, const std::vector<Recompile>& seen,
                                       std::vector<Firing>* fired) {
  // The batch's marks in time order (threads' rings are drained one after another).
  std::vector<const Recompile*> order;
  for (const Recompile& r : seen) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const Recompile* a, const Recompile* b) { return a->tick < b->tick; });
  for (Watched& w : watched_) {
    const TriggerSpec& spec = *w.spec;
    if (spec.kind != TriggerSpec::Kind::kRecompile) continue;
    const Recompile* fires = nullptr;
    std::size_t count = 0;
    for (const Recompile* r : order) {
      if (spec.window_ns == 0) {
        fires = r;  // every recompile: the batch's last
        continue;
      }
      const std::int64_t at = time.wall_ns(r->tick);
      w.recompiles.push_back(at);
      while (!w.recompiles.empty() && w.recompiles.front() <= at - spec.window_ns)
        w.recompiles.pop_front();
      const bool over = w.recompiles.size() > spec.more_than;
      if (over && !w.above) fires = r, count = w.recompiles.size();
      w.above = over;
    }
    if (fires == nullptr) continue;
    Firing f;
    f.spec = &spec;
    f.reason = "recompile " + fires->text;
    if (spec.window_ns > 0) {
      f.reason += " (" + std::to_string(count) + " recompiles in the last " +
                  seconds_text(spec.window_ns) + ", more than " +
                  std::to_string(spec.more_than) + ")";
      f.values = {{"recompiles", static_cast<double>(count)},
                  {"more_than", static_cast<double>(spec.more_than)},
                  {dd::kWindowS, static_cast<double>(spec.window_ns) / 1e9}};
    }
    f.at_tick = fires->tick;
    f.thread = fires->thread;
    fired->push_back(std::move(f));
  }
}

}  // namespace gpuprobe::flight
