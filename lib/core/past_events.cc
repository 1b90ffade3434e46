// Ranges and instants recorded after the fact, at wall-clock times another library measured.
// The wall time is placed on the session's tick clock through one fresh clock sample and the
// process's rate estimate: within a microsecond over the seconds such reports come late.
#include <cmath>

#include "core/clock.h"
#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe {
namespace {

// The ticks of `wall_ns`, or false when it lies in the future of `now` (a clock step, or a caller
// passing another clock's times) or so far back that the ticks would wrap.
bool ticks_at(const core::ClockSample& now, double ns_per_tick, std::int64_t wall_ns,
              std::uint64_t* ticks) noexcept {
  if (wall_ns > now.wall_ns) return false;
  const double back = static_cast<double>(now.wall_ns - wall_ns) / ns_per_tick;
  if (!(back < static_cast<double>(now.ticks))) return false;
  *ticks = now.ticks - static_cast<std::uint64_t>(std::llround(back));
  return true;
}

void record_at(std::string_view name, Category category, std::int64_t begin_wall_ns,
               std::int64_t end_wall_ns, bool range) noexcept {
  const std::uint64_t gate = detail::gate_for(category);
  if (gate == 0 || end_wall_ns < begin_wall_ns) return;
  const core::ClockSource source =
      gate & detail::kTscBit ? core::ClockSource::kTsc : core::ClockSource::kMonotonic;
  const core::ClockSample now = core::take_sample(source);
  const double rate = core::ns_per_tick(source);
  std::uint64_t begin = 0, end = 0;
  if (!ticks_at(now, rate, begin_wall_ns, &begin) || !ticks_at(now, rate, end_wall_ns, &end))
    return;
  const CallSite* site = detail::intern(name, category);
  detail::emit(gate, range ? detail::RecordKind::kRange : detail::RecordKind::kInstant, site, begin,
               range ? end : 0);
}

}  // namespace

namespace detail {

std::uint64_t ticks_in(std::uint64_t gate, std::uint64_t ns) noexcept {
  const double per_tick =
      core::ns_per_tick(gate & kTscBit ? core::ClockSource::kTsc : core::ClockSource::kMonotonic);
  return per_tick > 0 ? static_cast<std::uint64_t>(static_cast<double>(ns) / per_tick) : ns;
}

}  // namespace detail

void range_at(std::string_view name, Category category, std::int64_t begin_wall_ns,
              std::int64_t end_wall_ns) noexcept {
  record_at(name, category, begin_wall_ns, end_wall_ns, true);
}

void instant_at(std::string_view name, Category category, std::int64_t wall_ns) noexcept {
  record_at(name, category, wall_ns, wall_ns, false);
}

}  // namespace gpuprobe
