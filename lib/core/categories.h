// Category names and the set of enabled categories, and the gate word that publishes them to
// the hot path together with the session's settings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "formats/category_names.h"
#include "gpuprobe/call_site.hpp"

namespace gpuprobe::core {

using formats::kAllCategories;

// The name of `category` as config strings and outputs use it ("app", "gc", "user3" or the name
// given with name_category()).
std::string category_name(Category category);

// The category called `name`, if any.
std::optional<Category> category_by_name(std::string_view name);

// The names given with name_category(), for TraceInfo::category_names: indexed by Category, an
// empty entry where the built-in name holds; no entries at all when none was given.
std::vector<std::string> category_names();

// The enabled categories as a mask over kAllCategories.
std::uint32_t enabled_categories() noexcept;

// Sets the bits in `set` and clears those in `clear`, and republishes the gate.
void update_enabled_categories(std::uint32_t set, std::uint32_t clear) noexcept;

// What a running session publishes through the gate besides the categories.
struct GateSettings {
  std::uint32_t epoch;  // 1..detail::kMaxEpoch
  bool nvtx;
  bool tsc;
};

// Opens the gate: from now on events in enabled categories record for the session `settings`
// describes. Closing sets it to zero, so that nothing records.
void open_gate(const GateSettings& settings) noexcept;
void close_gate() noexcept;

// fork(): the category state's lock, held across it (core/fork.cc).
void lock_categories_for_fork() noexcept;
void unlock_categories_after_fork() noexcept;

// Tests: the next session takes the epoch after `epoch` (to reach the wrap without 2^30 sessions).
void set_last_epoch_for_testing(std::uint32_t epoch) noexcept;

}  // namespace gpuprobe::core
