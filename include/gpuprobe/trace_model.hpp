/// @file trace_model.hpp
/// @brief What a trace is made of, as the collector hands it to outputs and the readers hand it
/// to any sink: decoded events and their batches, the time base that turns ticks into
/// nanoseconds, the facts about the session (TraceInfo) and its statistics (Stats).
///
/// The output interface that consumes them is `Sink` (sink.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe {

/// Converts the session's clock ticks into nanoseconds since the Unix epoch.
///
/// The mapping is continuous and piecewise linear: a line from the session's start, and a new
/// line from each point where the session re-measured the tick rate, starting where the previous
/// one had got to. So a tick converts to the same nanosecond in every batch of a session, however
/// much later it is converted — a range and the ranges inside it stay nested whichever batches
/// they came in — and the rate is as good as the session's latest measurement. Wall time is
/// anchored once, at start: a later step of the system clock (NTP) does not move events.
class TimeBase {
 public:
  TimeBase() = default;
  /// One line through (`ref_ticks`, `ref_wall_ns`).
  TimeBase(std::uint64_t ref_ticks, std::int64_t ref_wall_ns, double ns_per_tick)
      : line_{ref_ticks, ref_wall_ns, ns_per_tick} {}
  /// `earlier` up to `ref_ticks`, and from there a line of slope `ns_per_tick` through
  /// `earlier.wall_ns(ref_ticks)`. `ref_ticks` must not come before earlier's last line.
  TimeBase(const TimeBase& earlier, std::uint64_t ref_ticks, double ns_per_tick)
      : line_{ref_ticks, earlier.wall_ns(ref_ticks), ns_per_tick} {
    auto lines = std::make_shared<std::vector<Line>>();
    if (earlier.earlier_) *lines = *earlier.earlier_;
    lines->push_back(earlier.line_);
    earlier_ = std::move(lines);
  }

  /// Nanoseconds since the Unix epoch at `ticks`. Doubles carry 53 bits, so the product is exact
  /// to well under a nanosecond for spans of months.
  std::int64_t wall_ns(std::uint64_t ticks) const noexcept {
    return line_for(ticks).wall_ns(ticks);
  }

  /// The tick at `wall_ns`, the inverse of wall_ns(): through the latest line whose start is at
  /// or before it (the first line also covers what came before), rounded to the nearest tick.
  std::uint64_t ticks_at(std::int64_t wall_ns) const noexcept {
    const Line* line = &line_;
    if (earlier_ && wall_ns < line_.ref_wall_ns) {
      // Lines are continuous, so their starts' wall times rise with their ticks.
      const std::vector<Line>& lines = *earlier_;
      line = &lines.front();
      for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        if (it->ref_wall_ns <= wall_ns) {
          line = &*it;
          break;
        }
      }
    }
    const double delta = static_cast<double>(wall_ns - line->ref_wall_ns) / line->ns_per_tick;
    return line->ref_ticks +
           static_cast<std::uint64_t>(static_cast<std::int64_t>(delta + (delta < 0 ? -0.5 : 0.5)));
  }

  /// Nanoseconds between two tick values.
  std::int64_t duration_ns(std::uint64_t from, std::uint64_t to) const noexcept {
    return wall_ns(to) - wall_ns(from);
  }

  /// Nanoseconds per tick, as last measured.
  double ns_per_tick() const noexcept { return line_.ns_per_tick; }

  /// The lines the mapping is made of (1 for a plain line).
  std::size_t lines() const noexcept { return 1 + (earlier_ ? earlier_->size() : 0); }

  /// Calls `f(ref_ticks, ref_wall_ns, ns_per_tick)` for each line, oldest first: what a file
  /// carries of the mapping, rebuilt with the two constructors above.
  template <class F>
  void for_each_line(F&& f) const {
    if (earlier_) {
      for (const Line& l : *earlier_) f(l.ref_ticks, l.ref_wall_ns, l.ns_per_tick);
    }
    f(line_.ref_ticks, line_.ref_wall_ns, line_.ns_per_tick);
  }

 private:
  struct Line {
    std::uint64_t ref_ticks = 0;
    std::int64_t ref_wall_ns = 0;
    double ns_per_tick = 1.0;

    std::int64_t wall_ns(std::uint64_t ticks) const noexcept {
      const double delta = static_cast<double>(static_cast<std::int64_t>(ticks - ref_ticks));
      return ref_wall_ns +
             static_cast<std::int64_t>(delta * ns_per_tick + (delta < 0 ? -0.5 : 0.5));
    }
  };

  // The line that covers `ticks`: the latest that starts at or before it (the first one also
  // covers everything before it). Most ticks are in the latest line.
  const Line& line_for(std::uint64_t ticks) const noexcept {
    if (!earlier_ || static_cast<std::int64_t>(ticks - line_.ref_ticks) >= 0) return line_;
    const std::vector<Line>& lines = *earlier_;
    std::size_t lo = 0, hi = lines.size();  // the answer is in [lo, hi)
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(ticks - lines[mid].ref_ticks) >= 0) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lines[lo];
  }

  Line line_;
  std::shared_ptr<const std::vector<Line>> earlier_;  // the lines before line_, in order
};

/// What kind of event an Event is.
enum class EventType : std::uint8_t {
  kRange,    ///< `begin`..`end`.
  kInstant,  ///< at `begin`.
  kCounter,  ///< `value` at `begin`.
  kGpu,      ///< GPU work or a CUDA API call, described by `gpu`.
};

/// One decoded event. Times are in ticks; convert them with the batch's TimeBase.
struct Event {
  EventType type;
  std::uint32_t thread;  ///< Index into EventBatch::threads; unused for kGpu.
  /// Name, category, source location; nullptr for kGpu. A static site lives for the whole
  /// process; the site of a run-time name until the second session after this one begins.
  const CallSite* site;
  std::uint64_t begin;
  std::uint64_t end;                 ///< Equal to `begin` for instants and counters.
  double value;                      ///< The counter value; the step number for steps; else 0.
  const GpuActivity* gpu = nullptr;  ///< For kGpu; valid during the sink call.

  /// The event for GPU activity `a`; it points to `a`, which must outlive it.
  static Event from_gpu(const GpuActivity& a) noexcept {
    Event e{EventType::kGpu, 0, nullptr, a.start, a.end, 0.0};
    e.gpu = &a;
    return e;
  }
};

/// Whether `e` is a switch of GPU recording in a trace with GPU bursts: the counter
/// kGpuRecordingCounter (category "cuda"), 1 from where recording switched on, 0 from off.
inline bool is_gpu_recording_switch(const Event& e) noexcept {
  return e.type == EventType::kCounter && e.site != nullptr &&
         e.site->category == Category::kCuda &&
         std::strcmp(e.site->name, kGpuRecordingCounter) == 0;
}

/// A thread that recorded in this session.
struct ThreadInfo {
  std::int64_t os_tid = 0;    ///< The kernel's thread id (gettid).
  std::string name;           ///< set_thread_name(), else the OS thread name.
  std::uint64_t written = 0;  ///< Events delivered to the sinks.
  std::uint64_t dropped = 0;  ///< Events lost because the thread's ring was full.
  /// The fullest the thread's ring was when the collector came for it, in records: how close
  /// the thread came to dropping (compare with Stats::ring_capacity).
  std::uint64_t peak_fill = 0;
};

/// GPU activity recording (CUPTI), in Stats.
struct GpuStats {
  /// "off" (not asked for), "cupti" (recording), or "CUPTI unavailable: <why>".
  std::string status = "off";
  std::uint64_t records = 0;  ///< GPU activities and API calls delivered to the sinks.
  /// Records lost: those CUPTI reports it dropped, which include the records it could not store
  /// because a buffer request was refused, and GPU work it handed back without timestamps. This
  /// is the one loss figure; do not add the next.
  std::uint64_t dropped = 0;
  /// Buffer requests refused because the pool had reached `cupti_mb` — why records were
  /// dropped, not more of them.
  std::uint64_t buffers_exhausted = 0;
  std::uint64_t filtered = 0;  ///< API calls dropped as noise (cudaGetDevice, ...).
  /// GPU work whose start precedes the start of the API call that launched it: a clock problem.
  std::uint64_t starts_before_launch = 0;
  /// Records given the gpuprobe range around their launch (GpuActivity::range), and records for
  /// which no range was found.
  std::uint64_t attributed = 0;
  std::uint64_t unattributed = 0;
  /// GPU work that could not be timed: records CUPTI handed back without timestamps (also in
  /// `dropped`), and gpuprobe::launch() kernels timed without CUPTI whose CUDA events failed or
  /// had not completed when the session stopped.
  std::uint64_t untimed = 0;
  /// With `gpu_burst=`: activity was recorded in bursts (see kGpuRecordingCounter), `bursts` of
  /// them, `recorded_ns` in all; every GPU figure is then a sample of that time.
  bool sampled = false;
  std::uint64_t bursts = 0;
  std::int64_t recorded_ns = 0;
};

/// The state of a session: totals and one row per thread that recorded. Every output carries it,
/// so a trace always says how much of what happened it does not show.
struct Stats {
  std::uint64_t written = 0;  ///< Events delivered to the sinks.
  std::uint64_t dropped = 0;  ///< Events lost: written + dropped = produced.
  /// Of `dropped`, events of threads that got no ring because all rings together had reached
  /// `rings_mb` (the rest were lost to full rings, per thread in `threads`).
  std::uint64_t dropped_no_ring = 0;
  std::uint64_t ring_capacity = 0;     ///< Records per thread ring.
  std::uint64_t names_overflowed = 0;  ///< Dynamic names not interned because the table was full.
  std::vector<ThreadInfo> threads;     ///< Indexed like Event::thread.
  GpuStats gpu;                        ///< GPU activity, when asked for.
};

/// A CUDA device, as the driver describes it (Kineto's `deviceProperties`).
struct DeviceInfo {
  int id = 0;
  std::string name;
  std::uint64_t total_global_mem = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  int regs_per_block = 0;
  int regs_per_multiprocessor = 0;
  int warp_size = 0;
  int shared_mem_per_block = 0;
  int shared_mem_per_multiprocessor = 0;
  int num_sms = 0;
  int shared_mem_per_block_optin = 0;
};

/// Facts about the session, given to each sink when it opens.
struct TraceInfo {
  std::int64_t pid = 0;
  std::string process_name;
  std::int64_t start_wall_ns = 0;   ///< Session start, ns since the Unix epoch.
  int rank = -1;                    ///< Distributed rank, or -1 when unknown.
  int world_size = -1;              ///< Number of ranks, or -1 when unknown.
  std::string clock;                ///< "tsc" or "monotonic".
  bool nvtx = false;                ///< Ranges are also pushed to an attached NVTX tool.
  std::vector<DeviceInfo> devices;  ///< CUDA devices, when GPU activity is recorded.
  std::string config;               ///< The config string the session started from.
  /// Names of categories, indexed by Category, where they are not the built-in ones ("app",
  /// ..., "user0".."user7"): those given with name_category(). An empty entry, or none at all,
  /// means the built-in name. Carried in the trace, so that a reader and `gpuprobe convert`
  /// keep them.
  std::vector<std::string> category_names;
};

/// Takes `from`'s rank and world size where `into` has no rank yet: a reader may learn them only
/// at the end of its input (a Perfetto trace states them in its closing summary), in
/// Sink::update_info.
inline void adopt_rank(TraceInfo& into, const TraceInfo& from) noexcept {
  if (into.rank >= 0 || from.rank < 0) return;
  into.rank = from.rank;
  into.world_size = from.world_size;
}

/// A file sink's Sink::update_info: takes what a session or reader states about the trace as it
/// goes (clock, NVTX domains, config string, category names) from `from`, and the devices and
/// rank where `into` has none yet (a reader may learn them only at the end of its input): the
/// sinks that write these at close keep the latest.
inline void adopt_trace_info(TraceInfo& into, const TraceInfo& from) {
  into.clock = from.clock;
  into.nvtx = from.nvtx;
  into.config = from.config;
  into.category_names = from.category_names;
  if (into.devices.empty()) into.devices = from.devices;
  adopt_rank(into, from);
}

/// Events handed to a sink in one call.
struct EventBatch {
  const Event* events = nullptr;
  std::size_t size = 0;
  const TimeBase* time = nullptr;
  /// Every thread seen so far in this session, indexed by Event::thread. Counts are those of the
  /// previous drain; Stats at close has the final ones.
  const std::vector<ThreadInfo>* threads = nullptr;

  const Event* begin() const noexcept { return events; }
  const Event* end() const noexcept { return events + size; }
};

}  // namespace gpuprobe
