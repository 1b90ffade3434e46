#include "core/name_table.h"

#include <array>
#include <cstring>

#include "gpuprobe/detail/gate.hpp"

namespace gpuprobe::core {
namespace {

constexpr CallSite kOverflowSite{"<name table full>", "", "", 0, 0xFF888888u, Category::kApp};

std::uint64_t hash_name(std::string_view name, Category category) noexcept {
  std::uint64_t h = 14695981039346656037ull ^ static_cast<std::uint64_t>(category);  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

bool same(const CallSite& site, std::string_view name, Category category) noexcept {
  return site.category == category && std::strncmp(site.name, name.data(), name.size()) == 0 &&
         site.name[name.size()] == '\0';
}

// A direct-mapped cache per thread in front of the locked table, so that a name seen before
// costs a hash and a compare: no lock, no allocation. Trivially destructible, so it needs no
// thread-exit registration.
struct CacheEntry {
  std::uint64_t hash;
  const CallSite* site;
};
constexpr std::size_t kCacheSize = 256;
thread_local std::array<CacheEntry, kCacheSize> t_cache{};

}  // namespace

NameTable& NameTable::get() {
  static NameTable* table = new NameTable;
  return *table;
}

const CallSite* NameTable::intern(std::string_view name, Category category) noexcept {
  try {
    std::string key;
    key.reserve(name.size() + 1);
    key.push_back(static_cast<char>(category));
    key.append(name);
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = by_key_.find(key); it != by_key_.end()) return it->second;
    if (entries_.size() >= limit()) {
      overflowed_.fetch_add(1, std::memory_order_relaxed);
      return &kOverflowSite;
    }
    Entry& e = entries_.emplace_back();
    e.name.assign(name.data(), name.size());
    const std::uint32_t h = static_cast<std::uint32_t>(hash_name(name, category));
    e.site = CallSite{e.name.c_str(), "", "", 0, detail::site_color("", h), category};
    by_key_.emplace(std::move(key), &e.site);
    return &e.site;
  } catch (...) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return &kOverflowSite;
  }
}

std::size_t NameTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace gpuprobe::core

namespace gpuprobe::detail {

const CallSite* intern(std::string_view name, Category category) noexcept {
  const std::uint64_t h = core::hash_name(name, category);
  core::CacheEntry& slot = core::t_cache[h % core::kCacheSize];
  if (slot.site != nullptr && slot.hash == h && core::same(*slot.site, name, category)) {
    return slot.site;
  }
  const CallSite* site = core::NameTable::get().intern(name, category);
  if (site != &core::kOverflowSite) slot = core::CacheEntry{h, site};
  return site;
}

}  // namespace gpuprobe::detail
