/// @file detail/gate.hpp
/// @brief The global gate every event checks, the thread's ring pointer, and the clock read.
///
/// Never include this header directly: include <gpuprobe/gpuprobe.hpp>. Its contents may change
/// in any release.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "gpuprobe/call_site.hpp"
#include "gpuprobe/detail/fixed_ring.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define GPUPROBE_LIKELY(x) __builtin_expect(!!(x), 1)
#define GPUPROBE_UNLIKELY(x) __builtin_expect(!!(x), 0)
// The recording path is a handful of instructions; a call (and the spills around it) would cost
// as much as the rest, and compilers do not always see that.
#define GPUPROBE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define GPUPROBE_LIKELY(x) (x)
#define GPUPROBE_UNLIKELY(x) (x)
#define GPUPROBE_ALWAYS_INLINE inline
#endif

namespace gpuprobe::detail {

/// The gate packs everything the hot path must know into one word, so that deciding whether and
/// how to record costs one relaxed load. Zero means "no session": nothing records.
///   bits 0..31   one bit per Category that is enabled
///   bit  32      emit NVTX ranges too
///   bit  33      timestamps come from the TSC (otherwise CLOCK_MONOTONIC)
///   bits 34..63  the session epoch (30 bits), so a thread notices that its ring belongs to an old
///                session
inline constexpr std::uint64_t kNvtxBit = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kTscBit = std::uint64_t{1} << 33;
inline constexpr int kEpochShift = 34;
/// The largest epoch; after it they start again at 1, and the registry then invalidates every
/// ring still held, so that a thread idle since an earlier session with the same epoch cannot
/// write into its stale ring.
inline constexpr std::uint32_t kMaxEpoch = (std::uint32_t{1} << 30) - 1;

/// The gate itself. Written only when a session starts or stops or categories change.
extern std::atomic<std::uint64_t> g_gate;

/// The TLS model of t_ring: initial-exec, a single %fs-relative load even from a shared library
/// linked at start-up. A module loaded later with dlopen (a Python extension, a plug-in) cannot
/// use it — the loader has no static TLS left for it — and builds with GPUPROBE_DYNAMIC_TLS
/// (CMake option of the same name), which costs a call on a thread's first access.
#if defined(GPUPROBE_DYNAMIC_TLS)
#define GPUPROBE_DETAIL_TLS_MODEL "global-dynamic"
#else
#define GPUPROBE_DETAIL_TLS_MODEL "initial-exec"
#endif

/// This thread's ring, or nullptr before its first event. Plain TLS (not `thread_local`) so that
/// reading it never goes through a C++ TLS wrapper function.
extern __thread ThreadRing* t_ring __attribute__((tls_model(GPUPROBE_DETAIL_TLS_MODEL)));

/// The gate if `category` is enabled, else 0.
inline std::uint64_t gate_for(Category category) noexcept {
  const std::uint64_t gate = g_gate.load(std::memory_order_relaxed);
  return gate & (std::uint64_t{1} << static_cast<unsigned>(category)) ? gate : 0;
}

/// The session epoch encoded in `gate`.
inline std::uint32_t epoch_of(std::uint64_t gate) noexcept {
  return static_cast<std::uint32_t>(gate >> kEpochShift);
}

/// Nanoseconds of CLOCK_MONOTONIC.
inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

/// The current time in ticks of the clock the session chose. Plain `rdtsc`, not `rdtscp`: the
/// TSC is only chosen when it is invariant, and the fence rdtscp implies would cost more than the
/// skew it avoids.
GPUPROBE_ALWAYS_INLINE std::uint64_t now_ticks(std::uint64_t gate) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (GPUPROBE_LIKELY(gate & kTscBit)) return __builtin_ia32_rdtsc();
#endif
  return monotonic_ns();
}

/// Gives this thread a ring for the session whose gate is `gate`. Returns nullptr when that
/// session is no longer the current one (the record belongs to a stopped session) or no memory
/// could be had. The only call on the recording path that may allocate or lock, and only on a
/// thread's first event of a session.
ThreadRing* acquire_ring(std::uint64_t gate) noexcept;

/// This thread's ring for the session whose gate is `gate`, acquired on first use; nullptr when
/// that session is over or no ring could be had.
GPUPROBE_ALWAYS_INLINE ThreadRing* ring_for(std::uint64_t gate) noexcept {
  ThreadRing* tr = t_ring;
  if (GPUPROBE_UNLIKELY(tr == nullptr ||
                        tr->epoch.load(std::memory_order_relaxed) != epoch_of(gate)))
    tr = acquire_ring(gate);
  return tr;
}

/// Appends one record to `tr`, or counts a drop when it is full.
GPUPROBE_ALWAYS_INLINE void push(ThreadRing* tr, RecordKind kind, const CallSite* site,
                                 std::uint64_t begin, std::uint64_t end,
                                 std::uint32_t arg = 0) noexcept {
  Record* r = tr->ring.try_reserve();
  if (GPUPROBE_UNLIKELY(r == nullptr)) return;
  r->begin = begin;
  r->end = end;
  r->site = site;
  r->kind = kind;
  r->arg = arg;
  tr->ring.commit();
}

/// Appends one record to this thread's ring for the session whose gate is `gate`.
inline void emit(std::uint64_t gate, RecordKind kind, const CallSite* site, std::uint64_t begin,
                 std::uint64_t end, std::uint32_t arg = 0) noexcept {
  ThreadRing* tr = ring_for(gate);
  if (GPUPROBE_LIKELY(tr != nullptr)) push(tr, kind, site, begin, end, arg);
}

/// NVTX export of a range or mark. Out of line so that users' include paths need no CUDA
/// headers; a no-op when gpuprobe was built without NVTX.
void nvtx_push(const CallSite& site) noexcept;
/// True when an NVTX tool (Nsight Systems, or any NVTX_INJECTION64_PATH library) is attached to
/// gpuprobe's NVTX calls. A session sets the gate's NVTX bit only then: NVTX binds its tool at
/// the first call, so with none attached every later push would be a call that does nothing.
bool nvtx_tool_attached() noexcept;
void nvtx_pop() noexcept;
void nvtx_mark(const CallSite& site) noexcept;

/// The CallSite for a dynamic name: interned on first use, then found in a per-thread cache
/// without locking or allocating. Never nullptr.
const CallSite* intern(std::string_view name, Category category) noexcept;

/// `ns` nanoseconds in ticks of the clock `gate` names (rounded down): for thresholds compared
/// with differences of now_ticks(gate).
std::uint64_t ticks_in(std::uint64_t gate, std::uint64_t ns) noexcept;

/// The one site intern() gives every name once the session's name table is full (and counts
/// each time): not the name's own, so a caller that keeps interned sites must not keep it.
const CallSite* name_table_full_site() noexcept;

}  // namespace gpuprobe::detail
