#include "core/steps.h"

#include <atomic>

#include "formats/steps.h"
#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe::core {
namespace {

// Steps end for the whole process, whichever thread marks them: the previous step's end is the
// next one's beginning.
std::atomic<std::uint64_t> g_last_step{0};
std::atomic<std::uint32_t> g_next_number{0};

void record_step(std::uint64_t gate, std::uint32_t number) noexcept {
  const std::uint64_t now = detail::now_ticks(gate);
  const std::uint64_t begin = g_last_step.exchange(now, std::memory_order_relaxed);
  detail::emit(gate, detail::RecordKind::kStep, &formats::step_site(), begin, now, number);
}

}  // namespace

void reset_steps(std::uint64_t start_ticks) noexcept {
  g_last_step.store(start_ticks, std::memory_order_relaxed);
  g_next_number.store(0, std::memory_order_relaxed);
}

}  // namespace gpuprobe::core

namespace gpuprobe {

void step() noexcept {
  const std::uint64_t gate = detail::gate_for(Category::kStep);
  if (gate == 0) return;
  core::record_step(gate, core::g_next_number.fetch_add(1, std::memory_order_relaxed));
}

void step(std::uint32_t number) noexcept {
  const std::uint64_t gate = detail::gate_for(Category::kStep);
  if (gate == 0) return;
  core::g_next_number.store(number + 1, std::memory_order_relaxed);
  core::record_step(gate, number);
}

void begin_steps() noexcept {
  const std::uint64_t gate = detail::gate_for(Category::kStep);
  if (gate == 0) return;
  core::reset_steps(detail::now_ticks(gate));
}

}  // namespace gpuprobe
