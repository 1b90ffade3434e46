// The flight window file (dump_format=window): what the store held reads back exactly — every
// kind of event, a kernel with every field, the clock's lines, the threads, the drops — through
// the same entry point as every trace file; only the events overlapping the window are kept; and
// a damaged file (cut anywhere, bytes flipped) gives one error, never a crash, with what came
// before the damage delivered.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "flight/event_store.h"
#include "flight/window_file.h"
#include "readers/trace_file.h"
#include "support/capture_sink.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

constexpr CallSite kRequest{"request", "serve", "server.cc", 10, 0xFF00FF00, Category::kApp};
constexpr CallSite kDepth{"queue depth", "", "", 0, 0, Category::kUser0};
constexpr CallSite kMark{"marker", "", "", 0, 0, Category::kApp};

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("gpuprobe_window_" + std::to_string(getpid()) + "_" + name))
      .string();
}

struct Window {
  flight::EventStore store{64u << 20};
  std::vector<GpuActivity> kernels;  // alive while appended
  flight::WindowFacts facts;
};

// 3 000 requests on two threads with a counter and a kernel each, over ticks 1 000..3 001 000
// (1 tick = 2 ns, piecewise: the rate re-measured at tick 1 500 000).
void fill(Window* w) {
  w->kernels.reserve(3000);
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const std::uint64_t t = 1000 + i * 1000;
    w->store.append(
        Event{EventType::kRange, static_cast<std::uint32_t>(i % 2), &kRequest, t, t + 600, 0.0});
    w->store.append(Event{EventType::kCounter, 0, &kDepth, t + 10, t + 10, double(i % 7)});
    GpuActivity k;
    k.kind = GpuActivityKind::kKernel;
    k.start = t + 100;
    k.end = t + 400;
    k.name = i % 2 ? "void gemm<128>(float*)" : "elementwise";
    k.correlation = static_cast<std::uint32_t>(i + 1);
    k.device = 1;
    k.stream = 7;
    k.grid[0] = 1024;
    k.block[0] = 256;
    k.registers_per_thread = 96;
    k.range = &kRequest;
    w->kernels.push_back(k);
    w->store.append(Event::from_gpu(w->kernels.back()));
  }
  w->facts.info.pid = 4242;
  w->facts.info.process_name = "server";
  w->facts.info.rank = 2;
  w->facts.info.world_size = 4;
  w->facts.info.clock = "tsc";
  w->facts.info.config = "flight=60,dump=/tmp/d,dump_format=window";
  DeviceInfo device;
  device.id = 1;
  device.name = "NVIDIA H200";
  device.num_sms = 132;
  w->facts.info.devices = {device};
  w->facts.time = TimeBase(TimeBase(0, 1'700'000'000'000'000'000, 2.0), 1'500'000, 2.5);
  w->facts.stats.threads = {ThreadInfo{111, "main", 0, 3, 0}, ThreadInfo{222, "worker", 0, 0, 0}};
  w->facts.stats.dropped = 3;
  w->facts.stats.gpu.status = "cupti";
  w->facts.stats.gpu.dropped = 5;
  w->facts.from_tick = 0;
  w->facts.to_tick = ~std::uint64_t{0};
}

// Also keeps the GPU activities' names, which live only as long as the reader.
class GpuNamesSink : public testing::CaptureSink {
 public:
  Status write(const EventBatch& batch) override {
    for (const Event& e : batch) {
      if (e.type != EventType::kGpu) continue;
      names.emplace_back(e.gpu->name != nullptr ? e.gpu->name : "");
      ranges.emplace_back(e.gpu->range != nullptr ? e.gpu->range->name : "");
    }
    return testing::CaptureSink::write(batch);
  }
  std::vector<std::string> names, ranges;
};

std::string read_bytes(const std::string& path) { return testing::read_file(path); }

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST_CASE("a flight window reads back as the store held it, through read_trace_file") {
  Window w;
  fill(&w);
  const std::string path = temp_path("full.gpwindow");
  const std::vector<Event> extra = {Event{EventType::kInstant, 1, &kMark, 2000, 2000, 0.0}};
  REQUIRE(flight::write_window_file(path, w.store.snapshot(), extra, w.facts).ok());

  GpuNamesSink sink;
  readers::TraceFormat format = readers::TraceFormat::kChrome;
  REQUIRE(readers::read_trace_file(path, sink, {}, &format).ok());
  CHECK(format == readers::TraceFormat::kFlightWindow);
  CHECK(sink.info().pid == 4242);
  CHECK(sink.info().process_name == "server");
  CHECK(sink.info().rank == 2);
  CHECK(sink.info().config == w.facts.info.config);
  REQUIRE(sink.info().devices.size() == 1);
  CHECK(sink.info().devices[0].name == "NVIDIA H200");
  CHECK(sink.info().devices[0].num_sms == 132);
  CHECK(sink.final_stats().dropped == 3);
  CHECK(sink.final_stats().gpu.dropped == 5);
  REQUIRE(sink.final_stats().threads.size() >= 2);
  CHECK(sink.final_stats().threads[1].name == "worker");
  CHECK(sink.final_stats().threads[0].os_tid == 111);

  std::size_t ranges = 0, counters = 0, marks = 0;
  for (const testing::CapturedEvent& e : sink.events()) {
    if (e.name == "request") {
      ++ranges;
      CHECK(e.type == EventType::kRange);
    }
    counters += e.name == "queue depth";
    marks += e.name == "marker";
  }
  CHECK(ranges == 3000);
  CHECK(counters == 3000);
  CHECK(marks == 1);
  // The times through both lines of the clock, exactly as the writer's TimeBase gives them.
  const auto& events = sink.events();
  const auto first =
      std::find_if(events.begin(), events.end(), [](const auto& e) { return e.name == "request"; });
  REQUIRE(first != events.end());
  CHECK(first->begin_ns == w.facts.time.wall_ns(1000));
  CHECK(first->end_ns == w.facts.time.wall_ns(1600));
  const auto last = std::find_if(events.rbegin(), events.rend(),
                                 [](const auto& e) { return e.name == "request"; });
  CHECK(last->begin_ns == w.facts.time.wall_ns(1000 + 2999 * 1000));

  const std::vector<GpuActivity> gpu = sink.gpu();
  REQUIRE(gpu.size() == 3000);
  const GpuActivity& k = gpu[1];
  CHECK(sink.names[1] == "void gemm<128>(float*)");
  CHECK(k.correlation == 2);
  CHECK(k.stream == 7);
  CHECK(k.grid[0] == 1024);
  CHECK(k.registers_per_thread == 96);
  CHECK(sink.ranges[1] == "request");
  CHECK(sink.time().wall_ns(k.start) == w.facts.time.wall_ns(1000 + 1000 + 100));
  fs::remove(path);
}

TEST_CASE("only the events that overlap the window are kept") {
  Window w;
  fill(&w);
  w.facts.from_tick = 1'000'000;
  w.facts.to_tick = 1'999'999;
  const std::string path = temp_path("part.gpwindow");
  REQUIRE(flight::write_window_file(path, w.store.snapshot(), {}, w.facts).ok());
  testing::CaptureSink sink;
  REQUIRE(readers::read_trace_file(path, sink).ok());
  std::size_t ranges = 0;
  for (const auto& e : sink.events()) ranges += e.name == "request";
  CHECK(ranges == 1000);  // those beginning at 1 000 000 .. 1 999 000
  CHECK(sink.gpu().size() == 1000);
  // The chunks that overlap, not all of them.
  const std::string all = temp_path("all.gpwindow");
  w.facts.from_tick = 0;
  w.facts.to_tick = ~std::uint64_t{0};
  REQUIRE(flight::write_window_file(all, w.store.snapshot(), {}, w.facts).ok());
  CHECK(fs::file_size(path) < fs::file_size(all));
  fs::remove(path);
  fs::remove(all);
}

TEST_CASE("a damaged flight window gives one error and what came before, never a crash") {
  Window w;
  fill(&w);
  const std::string path = temp_path("good.gpwindow");
  REQUIRE(flight::write_window_file(path, w.store.snapshot(), {}, w.facts).ok());
  const std::string good = read_bytes(path);
  const std::string bad = temp_path("bad.gpwindow");

  // Cut short anywhere: an error that names the file; the events of the whole chunks before.
  for (std::size_t cut = 0; cut < good.size(); cut += 1 + cut / 7) {
    write_bytes(bad, good.substr(0, cut));
    testing::CaptureSink sink;
    const Status s = readers::read_trace_file(bad, sink);
    CAPTURE(cut);
    REQUIRE_FALSE(s.ok());
    CHECK(testing::contains(s.message(), bad));
  }
  // Bytes flipped at random: any result but a crash (the sanitizers watch), errors named.
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string damaged = good;
    for (int i = 0; i < 4; ++i)
      damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255);
    write_bytes(bad, damaged);
    testing::CaptureSink sink;
    const Status s = readers::read_trace_file(bad, sink);
    if (!s.ok()) CHECK(testing::contains(s.message(), bad));
  }
  fs::remove(path);
  fs::remove(bad);
}

}  // namespace
}  // namespace gpuprobe
