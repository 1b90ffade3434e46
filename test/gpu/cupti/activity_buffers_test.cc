#include "gpu/cupti/activity_buffers.h"

#include <set>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::cupti {
namespace {

TEST_CASE("The pool hands out each buffer once, counts exhaustion and reuses what was consumed") {
  ActivityBufferPool pool(3, 1000, 3000);
  REQUIRE(pool.buffer_bytes() == 1000);
  REQUIRE(pool.capacity() == 3);
  std::set<std::uint8_t*> seen;
  std::vector<std::uint8_t*> taken;
  for (int i = 0; i < 3; ++i) {
    std::uint8_t* b = pool.acquire();
    REQUIRE(b != nullptr);
    REQUIRE(reinterpret_cast<std::uintptr_t>(b) % 8 == 0);  // CUPTI's alignment
    REQUIRE(seen.insert(b).second);
    taken.push_back(b);
  }
  REQUIRE(pool.acquire() == nullptr);
  REQUIRE(pool.exhausted() == 1);

  pool.complete(taken[0], 100);
  pool.complete(taken[1], 200);
  std::vector<std::size_t> parsed;
  pool.consume([&](std::uint8_t* buffer, std::size_t valid) {
    REQUIRE(seen.count(buffer) == 1);
    parsed.push_back(valid);
  });
  REQUIRE(parsed == std::vector<std::size_t>{100, 200});
  // Consumed buffers are free again; the third is still with "CUPTI".
  REQUIRE(seen.count(pool.acquire()) == 1);
  REQUIRE(seen.count(pool.acquire()) == 1);
  REQUIRE(pool.acquire() == nullptr);
  REQUIRE(pool.exhausted() == 2);
}

// CUPTI keeps a buffer per CUDA-calling thread: 16 threads hold 16 buffers at once, more than
// the 8 a session starts with. None may be refused below the memory cap.
TEST_CASE("The pool grows on demand up to its memory cap, then refuses and counts") {
  ActivityBufferPool pool(8, 4096, 20 * 4096);
  REQUIRE(pool.allocated() == 8);
  REQUIRE(pool.capacity() == 20);
  std::set<std::uint8_t*> held;
  for (int i = 0; i < 20; ++i) {
    std::uint8_t* b = pool.acquire();
    REQUIRE(b != nullptr);
    REQUIRE(reinterpret_cast<std::uintptr_t>(b) % 8 == 0);
    REQUIRE(held.insert(b).second);
  }
  REQUIRE(pool.exhausted() == 0);
  REQUIRE(pool.allocated() == 20);
  REQUIRE(pool.peak_in_use() == 20);
  REQUIRE(pool.acquire() == nullptr);
  REQUIRE(pool.exhausted() == 1);

  // What comes back is reused before anything new is allocated.
  for (std::uint8_t* b : held) pool.complete(b, 8);
  int parsed = 0;
  pool.consume([&](std::uint8_t*, std::size_t) { ++parsed; });
  REQUIRE(parsed == 20);
  for (int i = 0; i < 20; ++i) REQUIRE(held.count(pool.acquire()) == 1);
  REQUIRE(pool.allocated() == 20);
  REQUIRE(pool.peak_in_use() == 20);
}

TEST_CASE("A cap below the initial buffers keeps the initial buffers") {
  ActivityBufferPool pool(4, 4096, 4096);
  REQUIRE(pool.capacity() == 4);
  for (int i = 0; i < 4; ++i) REQUIRE(pool.acquire() != nullptr);
  REQUIRE(pool.acquire() == nullptr);
}

}  // namespace
}  // namespace gpuprobe::cupti

namespace gpuprobe::cupti {
namespace {

TEST_CASE("Buffers CUPTI never handed back are left allocated, the others freed with the pool") {
  std::vector<std::uint8_t*> kept;
  {
    ActivityBufferPool pool(4, 4096, 4 * 4096);
    std::uint8_t* returned = pool.acquire();
    std::uint8_t* parsed = pool.acquire();
    kept = {pool.acquire(), pool.acquire()};  // still with CUPTI when it is released
    pool.complete(parsed, 0);
    pool.consume([](std::uint8_t*, std::size_t) {});
    pool.complete(returned, 16);  // handed back, never parsed: safe to free too
    REQUIRE(pool.abandon_held() == 2);
    REQUIRE(pool.abandon_held() == 0);  // once
  }
  // Still the process's memory (ASan would report a use after free): CUPTI may write into them.
  for (std::uint8_t* b : kept) {
    b[0] = 1;
    b[4095] = 2;
    delete[] b;  // the test plays CUPTI's next owner
  }
}

}  // namespace
}  // namespace gpuprobe::cupti
