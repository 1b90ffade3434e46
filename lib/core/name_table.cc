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

// A direct-mapped cache per thread in front of the locked table, so that a name seen before
// costs a hash and a compare: no lock, no allocation. An entry is good only in the table
// generation it was filled in, since the table may free sites when a session begins.
//
// The entry keeps its own copy of the name, and a hit compares against that copy, never against
// the site: a thread may be paused between reading the generation and comparing while two
// sessions begin and free the site (found by TSan), and reading it then would be a use after
// free. The site is only handed back, unread: checked against the generation read before the
// compare, it was alive then, and it stays alive until the next-but-one session begins — the
// same window every interned site has (core/name_table.h). Names longer than kCachedNameBytes
// are not cached and take the locked path each time.
// Trivially destructible, so it needs no thread-exit registration.
constexpr std::size_t kCachedNameBytes = 74;
struct CacheEntry {
  std::uint64_t hash;
  const CallSite* site;
  std::uint32_t generation;
  std::uint8_t category;
  std::uint8_t length;
  char name[kCachedNameBytes];
};
static_assert(sizeof(CacheEntry) == 96, "a cache entry takes a cache line and a half");
constexpr std::size_t kCacheSize = 256;
thread_local std::array<CacheEntry, kCacheSize> t_cache{};

// An empty entry (generation 0, which the table never has) matches nothing.
bool cached(const CacheEntry& slot, std::uint64_t hash, std::string_view name, Category category,
            std::uint32_t generation) noexcept {
  return slot.hash == hash && slot.generation == generation && slot.length == name.size() &&
         slot.category == static_cast<std::uint8_t>(category) &&
         std::memcmp(slot.name, name.data(), name.size()) == 0;
}

// What a name may cost: each at most 64 KiB (longer ones are cut at a character boundary and
// end in "..."), all those of one session at most 64 MiB; past that, names record as
// "<name table full>". With the previous session's names, the table holds at most 128 MiB.
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
    const std::uint32_t generation = generation_.load(std::memory_order_relaxed);
    if (const auto it = by_key_.find(key); it != by_key_.end()) {
      Entry& e = *it->second;
      if (e.used != generation) {
        // Already held, so it costs nothing new; it counts towards this session's names so
        // that the two generations held stay within twice the caps.
        e.used = generation;
        ++session_names_;
        session_bytes_ += text.size();
      }
      return &e.site;
    }
    if (session_names_ >= limit() || session_bytes_ + text.size() > kMaxTableBytes) {
      overflowed_.fetch_add(1, std::memory_order_relaxed);
      return &kOverflowSite;
    }
    auto entry = std::make_unique<Entry>();
    entry->key = std::move(key);
    entry->used = generation;
    const std::uint32_t h = static_cast<std::uint32_t>(hash_name(text, category));
    entry->site = CallSite{entry->key.c_str() + 1, "", "", 0, detail::site_color("", h), category};
    const CallSite* site = &entry->site;
    const std::string_view view(entry->key);
    by_key_.emplace(view, std::move(entry));
    ++session_names_;
    session_bytes_ += text.size();
    bytes_ += text.size();
    return site;
  } catch (...) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return &kOverflowSite;
  }
}

void NameTable::begin_session() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint32_t previous = generation_.load(std::memory_order_relaxed);
  for (auto it = by_key_.begin(); it != by_key_.end();) {
    if (it->second->used != previous) {
      bytes_ -= it->second->key.size() - 1;
      it = by_key_.erase(it);
    } else {
      ++it;
    }
  }
  session_names_ = 0;
  session_bytes_ = 0;
  // Release pairs with the acquire in generation(): a thread that sees the new generation
  // ignores the cache entries it filled before.
  generation_.store(previous + 1, std::memory_order_release);
}

std::size_t NameTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_key_.size();
}

std::size_t NameTable::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace gpuprobe::core

namespace gpuprobe::detail {

const CallSite* intern(std::string_view name, Category category) noexcept {
  const std::uint64_t h = core::hash_name(name, category);
  core::NameTable& table = core::NameTable::get();
  const std::uint32_t generation = table.generation();
  core::CacheEntry& slot = core::t_cache[h % core::kCacheSize];
  if (core::cached(slot, h, name, category, generation)) return slot.site;
  const CallSite* site = table.intern(name, category);
  if (site != name_table_full_site() && name.size() <= core::kCachedNameBytes) {
    slot.hash = h;
    slot.site = site;
    slot.generation = generation;
    slot.category = static_cast<std::uint8_t>(category);
    slot.length = static_cast<std::uint8_t>(name.size());
    std::memcpy(slot.name, name.data(), name.size());
  }
  return site;
}

const CallSite* name_table_full_site() noexcept { return &core::kOverflowSite; }

}  // namespace gpuprobe::detail
