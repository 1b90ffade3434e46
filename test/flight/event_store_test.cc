// The flight recorder's store: every kind of event reads back exactly as appended (a kernel with
// every field set included), a window selects what overlaps it, and what ages out or exceeds
// the memory cap is dropped and counted — never silently.
#include "flight/event_store.h"

#include <cstring>
#include <vector>

#include "support/catch.hpp"

namespace gpuprobe::flight {
namespace {

constexpr CallSite kRequest{"request", "serve", "server.cc", 10, 0, Category::kApp};
constexpr CallSite kCounter{"queue depth", "", "", 0, 0, Category::kUser0};

std::vector<Event> read_all(const StoreSnapshot& s, std::uint64_t from, std::uint64_t to,
                            std::vector<GpuActivity>* gpu = nullptr) {
  std::vector<Event> out;
  decode(s, from, to, [&](const std::vector<Event>& batch) {
    for (const Event& e : batch) {
      out.push_back(e);
      if (e.type == EventType::kGpu && gpu != nullptr) gpu->push_back(*e.gpu);
      out.back().gpu = nullptr;  // valid only during the call
    }
  });
  return out;
}

GpuActivity full_kernel() {
  GpuActivity a;
  a.kind = GpuActivityKind::kKernel;
  a.start = 5'000'000'100;
  a.end = 5'000'009'999;
  a.name = "void gemm<128>(float*)";
  a.correlation = 4242;
  a.device = 3;
  a.context = 1;
  a.stream = 7;
  a.grid[0] = 1024, a.grid[1] = 2, a.grid[2] = 1;
  a.block[0] = 256, a.block[1] = 1, a.block[2] = 1;
  a.registers_per_thread = 96;
  a.static_shared_memory = 4096;
  a.dynamic_shared_memory = 49152;
  a.graph_id = 9;
  a.graph_node_id = 123456789012345;
  a.declared_bytes = 1.5e9;
  a.declared_flops = 3.25e12;
  a.bytes = 1 << 20;
  a.copy_kind = MemcpyKind::kDtoD;
  a.src_kind = MemoryKind::kDevice;
  a.dst_kind = MemoryKind::kPinned;
  a.cbid = 211;
  a.thread_id = 0xdeadbeef;
  a.os_tid = 98765;
  a.process_id = 4321;
  a.range = &kRequest;
  a.sync_kind = SyncKind::kStreamSynchronize;
  a.cuda_event_id = 17;
  return a;
}

TEST_CASE("every kind of event reads back as appended") {
  EventStore store(64 << 20);
  const GpuActivity kernel = full_kernel();
  GpuActivity api;  // mostly defaults: a field at its default costs nothing and reads back so
  api.kind = GpuActivityKind::kRuntimeApi;
  api.start = 4'999'000'000;
  api.end = 4'999'000'500;
  api.name = "cudaLaunchKernel";
  api.correlation = 4242;
  std::vector<Event> in = {
      {EventType::kRange, 2, &kRequest, 5'000'000'000, 5'000'020'000, 0.0},
      {EventType::kInstant, 0, &kRequest, 4'000'000'000, 4'000'000'000, 0.0},  // earlier: delta < 0
      {EventType::kCounter, 1, &kCounter, 5'000'000'001, 5'000'000'001, -12.5},
      Event::from_gpu(kernel),
      Event::from_gpu(api),
  };
  for (const Event& e : in) store.append(e);
  CHECK(store.latest_tick() == 5'000'020'000);
  std::vector<GpuActivity> gpu;
  const std::vector<Event> out = read_all(store.snapshot(), 0, ~std::uint64_t{0}, &gpu);
  REQUIRE(out.size() == in.size());
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(out[i].type == in[i].type);
    CHECK(out[i].thread == in[i].thread);
    CHECK(out[i].site == in[i].site);
    CHECK(out[i].begin == in[i].begin);
    CHECK(out[i].end == in[i].end);
    CHECK(out[i].value == in[i].value);
  }
  REQUIRE(gpu.size() == 2);
  // Every field of the kernel's record: none lost or changed.
  const GpuActivity& k = gpu[0];
  CHECK(k.kind == kernel.kind);
  CHECK(k.start == kernel.start);
  CHECK(k.end == kernel.end);
  CHECK(std::strcmp(k.name, kernel.name) == 0);
  CHECK(k.correlation == kernel.correlation);
  CHECK(k.device == kernel.device);
  CHECK(k.context == kernel.context);
  CHECK(k.stream == kernel.stream);
  for (int d = 0; d < 3; ++d) {
    CHECK(k.grid[d] == kernel.grid[d]);
    CHECK(k.block[d] == kernel.block[d]);
  }
  CHECK(k.registers_per_thread == kernel.registers_per_thread);
  CHECK(k.static_shared_memory == kernel.static_shared_memory);
  CHECK(k.dynamic_shared_memory == kernel.dynamic_shared_memory);
  CHECK(k.graph_id == kernel.graph_id);
  CHECK(k.graph_node_id == kernel.graph_node_id);
  CHECK(k.declared_bytes == kernel.declared_bytes);
  CHECK(k.declared_flops == kernel.declared_flops);
  CHECK(k.bytes == kernel.bytes);
  CHECK(k.copy_kind == kernel.copy_kind);
  CHECK(k.src_kind == kernel.src_kind);
  CHECK(k.dst_kind == kernel.dst_kind);
  CHECK(k.cbid == kernel.cbid);
  CHECK(k.thread_id == kernel.thread_id);
  CHECK(k.os_tid == kernel.os_tid);
  CHECK(k.process_id == kernel.process_id);
  CHECK(k.range == kernel.range);
  CHECK(k.sync_kind == kernel.sync_kind);
  CHECK(k.cuda_event_id == kernel.cuda_event_id);
  CHECK(gpu[1].kind == GpuActivityKind::kRuntimeApi);
  CHECK(std::strcmp(gpu[1].name, "cudaLaunchKernel") == 0);
  CHECK(gpu[1].start == api.start);
  CHECK(gpu[1].end == api.end);
  CHECK(gpu[1].correlation == 4242);
  CHECK(gpu[1].range == nullptr);
  CHECK(out[3].begin == kernel.start);
}

TEST_CASE("a window keeps what overlaps it; a snapshot does not change as the store goes on") {
  EventStore store(64 << 20);
  for (std::uint64_t i = 0; i < 100'000; ++i) {
    store.append({EventType::kRange, 0, &kRequest, i * 1000, i * 1000 + 1500, 0.0});
  }
  const StoreSnapshot before = store.snapshot();
  CHECK(before.chunks.size() > 1);  // sealed chunks and the open one
  for (std::uint64_t i = 100'000; i < 110'000; ++i) {
    store.append({EventType::kRange, 0, &kRequest, i * 1000, i * 1000 + 1500, 0.0});
  }
  CHECK(read_all(before, 0, ~std::uint64_t{0}).size() == 100'000);
  // [10 000 000, 20 000 000]: begins from 9 999 000 (its end 10 000 500 overlaps) to 20 000 000.
  const std::vector<Event> window = read_all(store.snapshot(), 10'000'000, 20'000'000);
  REQUIRE(window.size() == 10'002);
  CHECK(window.front().begin == 9'999'000);
  CHECK(window.back().begin == 20'000'000);
  // Ranges cost a few bytes each: 110 000 in well under 1 MiB.
  const StoreCounters c = store.counters();
  CHECK(c.events == 110'000);
  CHECK(c.bytes < (1u << 20));
}

TEST_CASE("what leaves the window, or passes the memory cap, is dropped and counted") {
  EventStore store(256 * 1024);  // four chunks
  std::uint64_t appended = 0;
  for (std::uint64_t i = 0; i < 200'000; ++i, ++appended) {
    store.append({EventType::kRange, 0, &kRequest, i * 1000, i * 1000 + 10, 0.0});
    if (i % 1000 == 999) store.evict(0);  // no horizon: only the cap
  }
  StoreCounters c = store.counters();
  CHECK(c.overwritten_memory > 0);
  CHECK(c.overwritten_age == 0);
  CHECK(c.events + c.overwritten_memory == appended);
  CHECK(c.bytes <= 256 * 1024 + 64 * 1024);
  // The newest are the ones kept.
  const std::vector<Event> kept = read_all(store.snapshot(), 0, ~std::uint64_t{0});
  REQUIRE_FALSE(kept.empty());
  CHECK(kept.back().begin == 199'999'000);
  CHECK(kept.size() == c.events);

  store.evict(store.latest_tick() - 5'000'000);  // a window of 5 ms
  c = store.counters();
  CHECK(c.overwritten_age > 0);
  CHECK(c.events + c.overwritten_memory + c.overwritten_age == appended);
  for (const Event& e : read_all(store.snapshot(), 0, ~std::uint64_t{0})) {
    // Whole chunks go: what is left may start a little before the horizon, never end long
    // before it.
    CHECK(e.begin + 64 * 1024 * 1000 >= store.latest_tick() - 5'000'000);
  }
}

}  // namespace
}  // namespace gpuprobe::flight
