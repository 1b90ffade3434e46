/// @file call_site.hpp
/// @brief `CallSite` (what a recorded event points to) and `Category` (the run-time switch that
/// turns groups of events on and off).
#pragma once

#include <cstdint>

namespace gpuprobe {

/// A group of events that can be switched on and off while a session runs.
///
/// A category is one bit of the gate every event checks, so enabling or disabling one costs the
/// hot path nothing extra. Categories up to `kCuda` are used by gpuprobe's own integrations; the
/// eight `kUser*` categories are free for applications, which can give them names with
/// `name_category()` so that config strings and outputs can refer to them.
enum class Category : std::uint8_t {
  kApp = 0,        ///< Application ranges: the default for every macro. Named "app".
  kStep = 1,       ///< Step markers (`ProfilerStep#N`). Named "step".
  kPython = 2,     ///< Ranges recorded from Python. Named "python".
  kTorch = 3,      ///< PyTorch module and operator ranges. Named "torch".
  kCompile = 4,    ///< torch.compile / Dynamo events. Named "compile".
  kGc = 5,         ///< Garbage-collector pauses. Named "gc".
  kAllocator = 6,  ///< Allocator events and statistics. Named "alloc".
  kCuda = 7,       ///< CUDA activity and API calls. Named "cuda".
  kUser0 = 24,     ///< Free for applications; named "user0" until renamed.
  kUser1 = 25,     ///< Free for applications; named "user1" until renamed.
  kUser2 = 26,     ///< Free for applications; named "user2" until renamed.
  kUser3 = 27,     ///< Free for applications; named "user3" until renamed.
  kUser4 = 28,     ///< Free for applications; named "user4" until renamed.
  kUser5 = 29,     ///< Free for applications; named "user5" until renamed.
  kUser6 = 30,     ///< Free for applications; named "user6" until renamed.
  kUser7 = 31,     ///< Free for applications; named "user7" until renamed.
};

/// Everything that is constant about one place in the code that records events.
///
/// The macros declare one `static constexpr CallSite` per call site, so a recorded event only
/// carries a pointer to it (Tracy's source-location design): no string is copied, hashed or
/// looked up while recording. Dynamic names are interned into a CallSite once and then behave
/// the same. A CallSite must outlive every session that may have recorded it; static and
/// interned ones live for the whole process.
struct CallSite {
  const char* name;      ///< Event name, NUL-terminated UTF-8.
  const char* function;  ///< Enclosing function, or "" when unknown.
  const char* file;      ///< Source file, or "" when unknown.
  std::uint32_t line;    ///< Source line, or 0 when unknown.
  std::uint32_t color;   ///< 0xAARRGGBB, used by NVTX and viewers that show colors.
  Category category;     ///< The run-time switch this site obeys.
};

namespace detail {

/// A stable color per call site, computed at compile time from file and line so that the same
/// range has the same color in every trace and in Nsight.
constexpr std::uint32_t site_color(const char* file, std::uint32_t line) noexcept {
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (const char* p = file; *p != '\0'; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  h = (h ^ line) * 16777619u;
  // A palette of saturated, distinguishable colors rather than raw hash bits, which often give
  // near-black or near-white.
  constexpr std::uint32_t kPalette[] = {0xFF4E79A7, 0xFFF28E2B, 0xFFE15759, 0xFF76B7B2,
                                        0xFF59A14F, 0xFFEDC948, 0xFFB07AA1, 0xFFFF9DA7,
                                        0xFF9C755F, 0xFF86BCB6, 0xFFD37295, 0xFF8CD17D};
  return kPalette[h % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

}  // namespace detail
}  // namespace gpuprobe
