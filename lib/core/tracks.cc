// Tracks: ranges that nest among themselves rather than with their thread's (asyncio tasks).
#include <atomic>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe {

std::uint32_t new_track() noexcept {
  static std::atomic<std::uint32_t> next{1};
  std::uint32_t track = next.fetch_add(1, std::memory_order_relaxed);
  if (track == 0) track = next.fetch_add(1, std::memory_order_relaxed);  // after 2^32 of them
  return track;
}

void name_track(std::uint32_t track, std::string_view name) noexcept {
  const std::uint64_t gate = detail::g_gate.load(std::memory_order_relaxed);
  if (gate == 0 || track == 0) return;
  detail::emit(gate, detail::RecordKind::kTrackName, detail::intern(name, Category::kApp),
               detail::now_ticks(gate), 0, track);
}

}  // namespace gpuprobe
