#include "core/categories.h"

#include <array>
#include <mutex>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe::core {
namespace {

// Guards names, the enabled mask and the session settings, so that a category toggled while a
// session starts or stops can never leave the gate disagreeing with them.
struct CategoryState {
  std::mutex mu;
  std::array<std::string, 32> names;
  std::uint32_t enabled = kAllCategories;
  std::optional<GateSettings> session;

  CategoryState() {
    for (unsigned i = 0; i < 32; ++i)
      names[i] = std::string(formats::default_category_name(static_cast<Category>(i)));
  }
};

CategoryState& state() {
  static CategoryState* s = new CategoryState;  // immortal: used from static destructors
  return *s;
}

bool exists(Category category) { return formats::category_exists(category); }

std::uint64_t compose_gate(const CategoryState& s) {
  if (!s.session) return 0;
  std::uint64_t gate = s.enabled;
  if (s.session->nvtx) gate |= detail::kNvtxBit;
  if (s.session->tsc) gate |= detail::kTscBit;
  gate |= static_cast<std::uint64_t>(s.session->epoch) << detail::kEpochShift;
  return gate;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name == "all") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string category_name(Category category) {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.names[static_cast<unsigned>(category) & 31u];
}

std::optional<Category> category_by_name(std::string_view name) {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  for (unsigned i = 0; i < 32; ++i) {
    if ((kAllCategories >> i & 1u) && s.names[i] == name) return static_cast<Category>(i);
  }
  return std::nullopt;
}

std::vector<std::string> category_names() {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<std::string> out;
  for (unsigned i = 0; i < 32; ++i) {
    if (s.names[i] == formats::default_category_name(static_cast<Category>(i))) continue;
    out.resize(32);
    out[i] = s.names[i];
  }
  return out;
}

std::uint32_t enabled_categories() noexcept {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.enabled;
}

void update_enabled_categories(std::uint32_t set, std::uint32_t clear) noexcept {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.enabled = ((s.enabled & ~clear) | set) & kAllCategories;
  detail::g_gate.store(compose_gate(s), std::memory_order_relaxed);
}

void open_gate(const GateSettings& settings) noexcept {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.session = settings;
  // Release: a thread that sees the new gate also sees the session set up before it (the ring
  // registry's epoch, the collector). The hot path's relaxed load is still enough, because it
  // reaches that state only through acquire_ring(), which locks.
  detail::g_gate.store(compose_gate(s), std::memory_order_release);
}

void close_gate() noexcept {
  CategoryState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.session.reset();
  detail::g_gate.store(0, std::memory_order_release);
}

void lock_categories_for_fork() noexcept { state().mu.lock(); }
void unlock_categories_after_fork() noexcept { state().mu.unlock(); }

}  // namespace gpuprobe::core

namespace gpuprobe {

void set_category_enabled(Category category, bool enabled) noexcept {
  if (!core::exists(category)) return;
  const std::uint32_t bit = 1u << static_cast<unsigned>(category);
  core::update_enabled_categories(enabled ? bit : 0, enabled ? 0 : bit);
}

bool category_enabled(Category category) noexcept {
  return core::exists(category) &&
         ((core::enabled_categories() >> static_cast<unsigned>(category)) & 1u);
}

bool name_category(Category category, std::string_view name) noexcept {
  if (static_cast<unsigned>(category) < static_cast<unsigned>(Category::kUser0) ||
      !core::exists(category) || !core::valid_name(name)) {
    return false;
  }
  core::CategoryState& s = core::state();
  std::lock_guard<std::mutex> lock(s.mu);
  for (const std::string& taken : s.names) {
    if (taken == name) return false;
  }
  try {
    s.names[static_cast<unsigned>(category)] = std::string(name);
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace gpuprobe
