// Once a thread has recorded its first event, recording allocates nothing: every operator new
// on the recording thread is counted while it records.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"

namespace {

thread_local bool t_counting = false;
thread_local std::uint64_t t_allocations = 0;

// Every replaceable allocation form goes through these two, so that sanitizers see matching
// pairs (malloc/free) whichever form the code uses.
void* counted_alloc(std::size_t size, std::size_t align) noexcept {
  if (t_counting) ++t_allocations;
  if (size == 0) size = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(size);
  return std::aligned_alloc(align, (size + align - 1) / align * align);
}

void* counted_alloc_or_throw(std::size_t size, std::size_t align) {
  if (void* p = counted_alloc(size, align)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc_or_throw(n, 0); }
void* operator new[](std::size_t n) { return counted_alloc_or_throw(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_alloc_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_alloc_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace gpuprobe {
namespace {

TEST_CASE("Recording allocates nothing after a thread's first event") {
  Session session("ring=1024");
  REQUIRE(session.ok());
  const std::string dynamic = "dynamic_name_longer_than_small_string_buffers";
  // First events: the ring and the per-thread caches are set up here.
  { GPUPROBE_RANGE("warm"); }
  { ScopedRange r(dynamic); }
  instant("warm_instant");
  counter("warm_counter", 1.0);

  t_counting = true;
  for (int i = 0; i < 10000; ++i) {  // far more than the ring holds: drops must not allocate either
    GPUPROBE_RANGE("static");
    ScopedRange r(dynamic);
    instant("warm_instant");
    counter("warm_counter", static_cast<double>(i));
    GPUPROBE_COUNTER("static_counter", 1.0);
  }
  t_counting = false;
  REQUIRE(t_allocations == 0);
  REQUIRE(session.stop().ok());
  REQUIRE(session.stats().dropped > 0);
}

}  // namespace
}  // namespace gpuprobe
