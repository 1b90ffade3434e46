#include "cupti/activity_buffers.h"

#include <set>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::cupti {
namespace {

TEST_CASE("The pool hands out each buffer once, counts exhaustion and reuses what was consumed") {
  ActivityBufferPool pool(3, 1000);
  REQUIRE(pool.buffer_bytes() == 1000);
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

}  // namespace
}  // namespace gpuprobe::cupti
