#include "core/name_table.h"

#include <algorithm>
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

// What a name may cost: each at most 64 KiB (longer ones are cut at a character boundary and
// end in "..."), all of them at most 64 MiB; past that, names record as "<name table full>".
// Readers (gpuprobe's and others) accept names up to 1 MiB, so every name written stays readable.
constexpr std::size_t kMaxNameBytes = 64 << 10;
constexpr std::size_t kMaxTableBytes = std::size_t{64} << 20;

// The name as stored: NUL bytes written as "\0" (a C string would end there), and cut to
// kMaxNameBytes.
std::string stored_name(std::string_view name) {
  std::string out;
  out.reserve(std::min(name.size(), kMaxNameBytes) + 3);
  for (const char c : name) {
    if (out.size() >= kMaxNameBytes) {
      // Back off to the start of a UTF-8 character, so the cut leaves valid text.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
        out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      out += "...";
      break;
    }
    if (c == '\0') {
      out += "\\0";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

NameTable& NameTable::get() {
  static NameTable* table = new NameTable;
  return *table;
}

const CallSite* NameTable::intern(std::string_view name, Category category) noexcept {
  try {
    const bool plain = name.size() <= kMaxNameBytes && name.find('\0') == std::string_view::npos;
    std::string stored = plain ? std::string() : stored_name(name);
    const std::string_view text = plain ? name : std::string_view(stored);
    std::string key;
    key.reserve(text.size() + 1);
    key.push_back(static_cast<char>(category));
    key.append(text);
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = by_key_.find(key); it != by_key_.end()) return it->second;
    if (entries_.size() >= limit() || bytes_ + text.size() > kMaxTableBytes) {
      overflowed_.fetch_add(1, std::memory_order_relaxed);
      return &kOverflowSite;
    }
    bytes_ += text.size();
    Entry& e = entries_.emplace_back();
    e.name.assign(text.data(), text.size());
    const std::uint32_t h = static_cast<std::uint32_t>(hash_name(text, category));
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
