#include "gpuprobe/detail/fixed_ring.hpp"

#include <memory>
#include <thread>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::detail {
namespace {

bool push(FixedRing& ring, std::uint64_t value) {
  Record* r = ring.try_reserve();
  if (r == nullptr) return false;
  *r = Record{value, value + 1, nullptr, RecordKind::kRange, 0};
  ring.commit();
  return true;
}

std::vector<std::uint64_t> drain_all(FixedRing& ring) {
  std::vector<std::uint64_t> out;
  ring.drain([&](const Record& r) { out.push_back(r.begin); });
  return out;
}

// A signal handler that records while it interrupts a record being written on the same thread
// would take the same slot: its record is dropped and counted instead, and the interrupted one
// is published whole.
TEST_CASE("A record made between another's reserve and commit is dropped and counted") {
  std::vector<Record> slots(8);
  FixedRing ring;
  ring.reset(slots.data(), slots.size());
  Record* interrupted = ring.try_reserve();
  REQUIRE(interrupted != nullptr);
  CHECK_FALSE(push(ring, 99));  // the "handler"
  CHECK(ring.dropped() == 1);
  *interrupted = Record{7, 8, nullptr, RecordKind::kRange, 0};
  ring.commit();
  CHECK(push(ring, 9));
  CHECK(drain_all(ring) == std::vector<std::uint64_t>{7, 9});
}

TEST_CASE("FixedRing keeps records in order across wrap-around") {
  std::vector<Record> slots(8);
  FixedRing ring;
  ring.reset(slots.data(), slots.size());
  std::uint64_t next = 0;
  std::uint64_t expected = 0;
  // 10 rounds of 5 records through 8 slots: indices wrap several times.
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 5; ++i) REQUIRE(push(ring, next++));
    for (std::uint64_t v : drain_all(ring)) REQUIRE(v == expected++);
  }
  REQUIRE(expected == 50);
  REQUIRE(ring.dropped() == 0);
}

TEST_CASE("FixedRing drops the newest record when full and counts it") {
  std::vector<Record> slots(4);
  FixedRing ring;
  ring.reset(slots.data(), slots.size());
  for (std::uint64_t v = 0; v < 4; ++v) REQUIRE(push(ring, v));
  REQUIRE_FALSE(push(ring, 100));
  REQUIRE_FALSE(push(ring, 101));
  REQUIRE(ring.dropped() == 2);
  // The oldest records survive, the dropped ones never appear.
  REQUIRE(drain_all(ring) == std::vector<std::uint64_t>{0, 1, 2, 3});
  REQUIRE(push(ring, 4));  // space again after the drain
  REQUIRE(drain_all(ring) == std::vector<std::uint64_t>{4});
  REQUIRE(ring.dropped() == 2);
}

TEST_CASE("FixedRing discard frees slots without reading them") {
  std::vector<Record> slots(4);
  FixedRing ring;
  ring.reset(slots.data(), slots.size());
  for (std::uint64_t v = 0; v < 3; ++v) REQUIRE(push(ring, v));
  REQUIRE(ring.discard() == 3);
  REQUIRE(drain_all(ring).empty());
  for (std::uint64_t v = 0; v < 4; ++v) REQUIRE(push(ring, v));
}

TEST_CASE("FixedRing with a concurrent producer and consumer loses nothing it does not count") {
  std::vector<Record> slots(64);
  FixedRing ring;
  ring.reset(slots.data(), slots.size());
  constexpr std::uint64_t kProduced = 2'000'000;
  std::uint64_t accepted = 0;
  std::thread producer([&] {
    for (std::uint64_t v = 0; v < kProduced; ++v) accepted += push(ring, v) ? 1 : 0;
  });
  std::uint64_t received = 0;
  std::uint64_t last = 0;
  bool ordered = true;
  bool intact = true;
  bool done = false;
  while (!done) {
    done = received + ring.dropped() == kProduced;
    ring.drain([&](const Record& r) {
      // Accepted values arrive in increasing order and each record is whole.
      if (received > 0 && r.begin <= last) ordered = false;
      if (r.end != r.begin + 1) intact = false;
      last = r.begin;
      ++received;
    });
  }
  producer.join();
  received += ring.drain([](const Record&) {});
  REQUIRE(ordered);
  REQUIRE(intact);
  REQUIRE(received == accepted);
  REQUIRE(received + ring.dropped() == kProduced);
}

}  // namespace
}  // namespace gpuprobe::detail
