/// @file range.hpp
/// @brief Recording: scoped ranges, instants and counters, and the macros that create them.
///
/// This is the whole hot path. A range that records is: one relaxed load of the gate, a branch,
/// a clock read at each end, the thread's open-range count up and down, and one 32-byte record
/// written into the thread's ring (`push` in detail/gate.hpp: reserve a slot, write time and
/// pointer, commit). With no session running it is the load and the branch. With `GPUPROBE_DISABLE`
/// defined the macros compile to nothing; the classes and functions below stay available and keep
/// working.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/detail/gate.hpp"

namespace gpuprobe {

/// A range begun and ended by explicit calls instead of a scope: for bindings (Python's `with`),
/// and for callbacks that see an operation's start and its end separately (a GC pause).
///
/// begin() and end() must be called on the same thread, and ranges on a thread must nest (the
/// last begun ends first). Otherwise it behaves as ScopedRange. Unlike ScopedRange it may live on
/// the heap.
class ManualRange {
 public:
  /// Opens the range, if `site`'s category records now.
  GPUPROBE_ALWAYS_INLINE void begin(const CallSite& site) noexcept {
    begin_on_track(site, site.category, 0);
  }

  /// Opens the range under a run-time name, interned once per thread and name.
  void begin(std::string_view name, Category category = Category::kApp) noexcept {
    begin_on_track(name, category, 0);
  }

  /// Opens the range on `track` (from new_track()): ranges on one track nest among themselves,
  /// not with the thread's other ranges, and the outputs show each track as a thread of its own
  /// (named with name_track()). For a sequence of work that pauses while the thread runs other
  /// work — an asyncio task, whose ranges cross `await`s — so that interleaved ranges are never
  /// drawn as a wrong nest. Track 0 is the thread itself.
  void begin_on_track(std::string_view name, Category category, std::uint32_t track) noexcept {
    gate_ = detail::gate_for(category);
    track_ = track;
    if (GPUPROBE_UNLIKELY(gate_ != 0)) {
      site_ = detail::intern(name, category);
      open();
    }
  }

  /// Opens the range for `site` on `track` if `category` records now: begin_on_track() for a
  /// site already interned (detail::intern, in this session) or static, so that a caller that
  /// keeps the site — Python's range object — skips the name's lookup at each entry. The
  /// category is the caller's, not the site's: a full name table interns every name to one
  /// overflow site of its own category.
  GPUPROBE_ALWAYS_INLINE void begin_on_track(const CallSite& site, Category category,
                                             std::uint32_t track) noexcept {
    site_ = &site;
    track_ = track;
    gate_ = detail::gate_for(category);
    if (GPUPROBE_UNLIKELY(gate_ != 0)) open();
  }

  /// Closes the range and records it; does nothing if it did not open.
  GPUPROBE_ALWAYS_INLINE void end() noexcept {
    if (GPUPROBE_UNLIKELY(gate_ != 0)) close();
    gate_ = 0;
  }

  /// True between a begin() that recorded and its end().
  bool recording() const noexcept { return gate_ != 0; }

  /// The track the range was begun on (0: the thread itself).
  std::uint32_t track() const noexcept { return track_; }

 private:
  GPUPROBE_ALWAYS_INLINE void open() noexcept {
    // The ring is taken at the first range's open, not at its close, so that the collector knows
    // the thread (and how many ranges it has open) while the range runs: GPU work launched
    // inside is attributed without waiting for the outermost range to close.
    detail::ThreadRing* tr = detail::ring_for(gate_);
    if (GPUPROBE_UNLIKELY(tr == nullptr)) {
      gate_ = 0;  // no ring, no record: the session ended or memory ran out
      return;
    }
    tr->depth.store(tr->depth.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // NVTX first, so that its cost falls outside the measured interval.
    if (gate_ & detail::kNvtxBit) detail::nvtx_push(*site_);
    begin_ = detail::now_ticks(gate_);
  }

  GPUPROBE_ALWAYS_INLINE void close() noexcept {
    const std::uint64_t end = detail::now_ticks(gate_);
    // The ring of the session the range opened in, or none if that session has ended and a new
    // one has begun (then the ring counted up at open is no longer this thread's).
    detail::ThreadRing* tr = detail::ring_for(gate_);
    if (GPUPROBE_LIKELY(tr != nullptr)) {
      detail::push(tr, detail::RecordKind::kRange, site_, begin_, end, track_);
      // After the record is published: a collector that sees the lower depth sees the record.
      tr->depth.store(tr->depth.load(std::memory_order_relaxed) - 1, std::memory_order_release);
    }
    if (gate_ & detail::kNvtxBit) detail::nvtx_pop();
  }

  const CallSite* site_ = nullptr;
  std::uint64_t gate_ = 0;  // the gate seen at begin(), or 0 when this range does not record
  std::uint64_t begin_ = 0;
  std::uint32_t track_ = 0;
};

/// A number for a new track (see ManualRange::begin_on_track), unique in the process; never 0.
std::uint32_t new_track() noexcept;

/// Names `track` in the running session, as the outputs show it ("asyncio Task-3"). Call it on
/// the thread that records the track's ranges, in each session that records them.
void name_track(std::uint32_t track, std::string_view name) noexcept;

/// Records the time from its construction to its destruction as one range on this thread.
///
/// Ranges nest: a range opened inside another closes first. While a session records with NVTX
/// on, each range is also pushed to and popped from the NVTX domain "gpuprobe", so Nsight
/// Systems shows the same names. A range is recorded only if its category was enabled when it
/// opened and the session that was running then is still running when it closes; a range still
/// open when a session stops is not recorded.
class ScopedRange {
 public:
  /// Opens a range for a call site with static storage (what the macros create).
  explicit ScopedRange(const CallSite& site) noexcept { range_.begin(site); }

  /// Opens a range for a run-time name, interned once per thread and name: about twice the cost
  /// of a static site. The category decides, as for static sites, whether it records.
  explicit ScopedRange(std::string_view name, Category category = Category::kApp) noexcept {
    range_.begin(name, category);
  }

  /// Closes the range and records it.
  ~ScopedRange() { range_.end(); }

  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
  /// Scoped: on the stack only, so that ranges nest by construction.
  void* operator new(std::size_t) = delete;

 private:
  ManualRange range_;
};

/// Records a point in time on this thread for a static call site.
inline void instant(const CallSite& site) noexcept {
  const std::uint64_t gate = detail::gate_for(site.category);
  if (GPUPROBE_LIKELY(gate == 0)) return;
  if (gate & detail::kNvtxBit) detail::nvtx_mark(site);
  detail::emit(gate, detail::RecordKind::kInstant, &site, detail::now_ticks(gate), 0);
}

/// Records a point in time on this thread, e.g. `gpuprobe::instant("checkpoint")`.
inline void instant(std::string_view name, Category category = Category::kApp) noexcept {
  if (GPUPROBE_LIKELY(detail::gate_for(category) == 0)) return;
  instant(*detail::intern(name, category));
}

/// Records the value of a counter (a queue depth, bytes in use) at this moment.
inline void counter(const CallSite& site, double value) noexcept {
  const std::uint64_t gate = detail::gate_for(site.category);
  if (GPUPROBE_LIKELY(gate == 0)) return;
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  detail::emit(gate, detail::RecordKind::kCounter, &site, detail::now_ticks(gate), bits);
}

/// Records the value of a counter, e.g. `gpuprobe::counter("queue_depth", 12.0)`.
inline void counter(std::string_view name, double value,
                    Category category = Category::kApp) noexcept {
  if (GPUPROBE_LIKELY(detail::gate_for(category) == 0)) return;
  counter(*detail::intern(name, category), value);
}

/// Marks the end of a step — a training iteration, a serving interval — and the start of the
/// next: records the step that just ended as a range `ProfilerStep#N` (category `step`) on the
/// calling thread, from the previous step() of the session (or its start) to now. Steps are
/// numbered 0, 1, 2, ... per session. Sinks that aggregate per step use these.
void step() noexcept;

/// The same, numbering the step that just ended `number`; later steps count on from there.
void step(std::uint32_t number) noexcept;

/// Marks where step 0 begins, without recording a step: the time since the session's start (or
/// the last step()) is no step, and the next step() ends step 0. For a recorder that learns of
/// steps only from their ends — `gpuprobe run`'s optimizer hook, whose first call comes after
/// the program's imports, set-up and first iteration.
void begin_steps() noexcept;

/// Records, on the calling thread, a range that already happened between two CLOCK_REALTIME
/// times in nanoseconds (`time.time_ns()` in Python): for events another library timed and
/// reported afterwards, such as a compile whose true span is known only from its metrics. Not
/// for hot paths: it takes a clock sample to place the times. Ignored when `end_wall_ns` is
/// before `begin_wall_ns` or either is later than now.
void range_at(std::string_view name, Category category, std::int64_t begin_wall_ns,
              std::int64_t end_wall_ns) noexcept;

/// Records, on the calling thread, an instant that already happened at a CLOCK_REALTIME time in
/// nanoseconds; the same rules as range_at().
void instant_at(std::string_view name, Category category, std::int64_t wall_ns) noexcept;

/// Names the calling thread in every output ("thread 1234 (name)"). The default is the name the
/// OS knows (pthread_setname_np). Cheap to call repeatedly with the same name.
void set_thread_name(std::string_view name) noexcept;

namespace detail {
/// For language bindings: the name a runtime gives the calling thread (Python's
/// `threading.Thread.name`), used in place of the OS name until set_thread_name() gives one.
/// Renames the ring the thread holds unless set_thread_name() named the thread. Changes nothing
/// the OS or the runtime sees.
void set_runtime_thread_name(std::string_view name) noexcept;
}  // namespace detail

/// Switches a category on or off, for the running session and the ones that follow. Ranges
/// already open keep the state they saw when they opened.
void set_category_enabled(Category category, bool enabled) noexcept;

/// True if `category` is switched on (whether or not a session is running).
bool category_enabled(Category category) noexcept;

/// Gives a `kUser*` category a name usable in config strings (`categories=app+io`) and shown in
/// outputs. Returns false (and changes nothing) for built-in categories and invalid names.
bool name_category(Category category, std::string_view name) noexcept;

}  // namespace gpuprobe

#define GPUPROBE_DETAIL_CONCAT2(a, b) a##b
#define GPUPROBE_DETAIL_CONCAT(a, b) GPUPROBE_DETAIL_CONCAT2(a, b)
#define GPUPROBE_DETAIL_SITE(category, name)                                                    \
  static constexpr ::gpuprobe::CallSite GPUPROBE_DETAIL_CONCAT(gpuprobe_site_, __LINE__) {      \
    name, __FUNCTION__, __FILE__, __LINE__, ::gpuprobe::detail::site_color(__FILE__, __LINE__), \
        category                                                                                \
  }

#if defined(GPUPROBE_DISABLE)

#define GPUPROBE_RANGE_IN(category, name) static_cast<void>(0)
#define GPUPROBE_RANGE(name) static_cast<void>(0)
#define GPUPROBE_FUNCTION() static_cast<void>(0)
#define GPUPROBE_INSTANT(name) static_cast<void>(0)
#define GPUPROBE_COUNTER(name, value) static_cast<void>(0)

#else

/// Records a range named `name` (a string literal) in `category` until the end of the scope.
/// Like every range macro it is a declaration: give it a scope of its own (braces), not the
/// bare body of an `if` or a loop.
#define GPUPROBE_RANGE_IN(category, name)                                     \
  GPUPROBE_DETAIL_SITE(category, name);                                       \
  ::gpuprobe::ScopedRange GPUPROBE_DETAIL_CONCAT(gpuprobe_range_, __LINE__) { \
    GPUPROBE_DETAIL_CONCAT(gpuprobe_site_, __LINE__)                          \
  }

/// Records a range named `name` (a string literal) until the end of the scope.
#define GPUPROBE_RANGE(name) GPUPROBE_RANGE_IN(::gpuprobe::Category::kApp, name)

/// Records a range named after the enclosing function until the end of the scope.
#define GPUPROBE_FUNCTION() GPUPROBE_RANGE_IN(::gpuprobe::Category::kApp, __FUNCTION__)

/// Records an instant named `name` (a string literal) with no per-call string work.
#define GPUPROBE_INSTANT(name)                                             \
  do {                                                                     \
    GPUPROBE_DETAIL_SITE(::gpuprobe::Category::kApp, name);                \
    ::gpuprobe::instant(GPUPROBE_DETAIL_CONCAT(gpuprobe_site_, __LINE__)); \
  } while (0)

/// Records a counter value under `name` (a string literal) with no per-call string work.
#define GPUPROBE_COUNTER(name, value)                                               \
  do {                                                                              \
    GPUPROBE_DETAIL_SITE(::gpuprobe::Category::kApp, name);                         \
    ::gpuprobe::counter(GPUPROBE_DETAIL_CONCAT(gpuprobe_site_, __LINE__), (value)); \
  } while (0)

#endif
