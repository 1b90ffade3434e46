// Once a thread has recorded its first event, recording allocates nothing: every operator new
// on the recording thread is counted while it records.
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"

namespace {
thread_local bool t_counting = false;
thread_local std::uint64_t t_allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (t_counting) ++t_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

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
  session.stop();
  REQUIRE(session.stats().dropped > 0);
}

}  // namespace
}  // namespace gpuprobe
