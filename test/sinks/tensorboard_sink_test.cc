// The TensorBoard sink's output, decoded with classes protoc generates from
// third_party/tensorboard/tensorboard_event.proto and third_party/xprof/xplane.proto
// (TensorBoard's and XProf's field numbers): TFRecord framing and CRCs, per-step scalars and
// histograms, strictly rising steps, and the XSpace's planes, lines, events and stats.
#include "sinks/tensorboard_sink.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpuprobe/gpuprobe.hpp"
#include "sinks/crc32c.h"
#include "support/catch.hpp"
#include "support/strings.h"
#include "tensorboard_event.pb.h"
#include "xplane.pb.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

// Every record of a TFRecord file, each CRC checked.
std::vector<tensorboard::Event> read_events(const fs::path& path) {
  const std::string file = testing::read_file(path.string());
  std::vector<tensorboard::Event> events;
  std::size_t at = 0;
  while (at < file.size()) {
    REQUIRE(at + 12 <= file.size());
    std::uint64_t length;
    std::uint32_t length_crc, data_crc;
    std::memcpy(&length, file.data() + at, 8);
    std::memcpy(&length_crc, file.data() + at + 8, 4);
    CHECK(length_crc == sinks::mask_crc(sinks::crc32c(std::string_view(file.data() + at, 8))));
    REQUIRE(at + 16 + length <= file.size());
    const std::string_view data(file.data() + at + 12, length);
    std::memcpy(&data_crc, file.data() + at + 12 + length, 4);
    CHECK(data_crc == sinks::mask_crc(sinks::crc32c(data)));
    tensorboard::Event e;
    REQUIRE(e.ParseFromArray(data.data(), static_cast<int>(data.size())));
    events.push_back(e);
    at += 16 + length;
  }
  return events;
}

fs::path only_file(const fs::path& dir, const std::string& infix) {
  fs::path found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() &&
        entry.path().filename().string().find(infix) != std::string::npos) {
      CHECK(found.empty());
      found = entry.path();
    }
  }
  REQUIRE(!found.empty());
  return found;
}

constexpr CallSite kStep{"ProfilerStep", "", "", 0, 0, Category::kStep};
constexpr CallSite kForward{"forward", "", "", 0, 0, Category::kApp};
constexpr CallSite kLoad{"load", "", "", 0, 0, Category::kApp};

// Three steps of 1 ms on one thread; in step s, "forward" lasts 100, 200, ..., 1000 us (ten
// ranges) and one kernel runs for (s + 1) * 100 us on stream 3 of device 0.
struct Synthetic {
  static constexpr std::int64_t kStart = 1'764'460'800'000'000'000;
  TraceInfo info;
  TimeBase time{0, kStart, 1.0};
  std::vector<ThreadInfo> threads = std::vector<ThreadInfo>(1);
  std::vector<GpuActivity> gpu;
  std::vector<Event> events;

  Synthetic() {
    info.pid = 77;
    info.start_wall_ns = kStart;
    DeviceInfo d;
    d.name = "Test GPU";
    d.num_sms = 132;
    d.compute_major = 9;
    info.devices.push_back(d);
    threads[0].os_tid = 78;
    threads[0].name = "trainer";
    gpu.reserve(3);
    for (int s = 0; s < 3; ++s) {
      const std::uint64_t base = static_cast<std::uint64_t>(s) * 1'000'000;
      for (int k = 1; k <= 10; ++k) {
        events.push_back(Event{EventType::kRange, 0, &kForward, base + 1000,
                               base + 1000 + static_cast<std::uint64_t>(k) * 50'000, 0.0});
      }
      GpuActivity a;
      a.kind = GpuActivityKind::kKernel;
      a.name = "gemm";
      a.stream = 3;
      a.correlation = static_cast<std::uint32_t>(s + 1);
      a.grid[0] = 64;
      a.block[0] = 128;
      a.registers_per_thread = 32;
      a.start = base + 200'000;
      a.end = a.start + static_cast<std::uint64_t>(s + 1) * 100'000;
      gpu.push_back(a);
      events.push_back(
          Event{EventType::kRange, 0, &kStep, base, base + 1'000'000, static_cast<double>(s)});
    }
    for (const GpuActivity& a : gpu) events.push_back(Event::from_gpu(a));
  }
  EventBatch batch() const { return EventBatch{events.data(), events.size(), &time, &threads}; }
};

TEST_CASE("CRC-32C and its mask match TensorBoard's test vectors") {
  CHECK(sinks::crc32c(std::string(32, '\0')) == 0x8a9136aau);
  CHECK(sinks::mask_crc(sinks::crc32c("\x1a\x11"
                                      "CRC test, one two")) == 0x5794d08au);
}

TEST_CASE("per-step scalars and histograms, and an XSpace of the timeline") {
  const fs::path dir = fs::temp_directory_path() / ("tb_sink_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Synthetic t;
  {
    sinks::TensorBoardSink sink(dir.string());
    REQUIRE(sink.open(t.info).ok());
    REQUIRE(sink.write(t.batch()).ok());
    Stats stats;
    stats.threads = t.threads;
    REQUIRE(sink.close(stats, t.time).ok());
  }
  const std::vector<tensorboard::Event> events =
      read_events(only_file(dir, "events.out.tfevents."));
  REQUIRE(events.size() == 4);
  CHECK(events[0].file_version() == "brain.Event:2");
  CHECK(events[0].source_metadata().writer() == "gpuprobe");

  std::map<std::string, std::vector<std::pair<std::int64_t, float>>> scalars;
  std::map<std::string, std::vector<tensorboard::HistogramProto>> histograms;
  std::map<std::string, int> with_metadata;
  for (std::size_t i = 1; i < events.size(); ++i) {
    CHECK(events[i].step() == static_cast<std::int64_t>(i - 1));
    CHECK(events[i].wall_time() == Approx((Synthetic::kStart + i * 1'000'000) * 1e-9));
    for (const auto& v : events[i].summary().value()) {
      if (v.has_metadata()) with_metadata[v.tag()]++;
      if (v.has_histo()) {
        histograms[v.tag()].push_back(v.histo());
      } else {
        scalars[v.tag()].emplace_back(events[i].step(), v.simple_value());
      }
    }
  }
  for (const auto& [tag, n] : with_metadata) CHECK(n == 1);  // first value of each tag only
  CHECK(with_metadata.size() == scalars.size() + histograms.size());
  for (int s = 0; s < 3; ++s) {
    CHECK(scalars["step/time_ms"][s].second == Approx(1.0));
    CHECK(scalars["gpu0/busy_percent"][s].second == Approx(10.0 * (s + 1)));
    CHECK(scalars["gpu0/kernels"][s].second == 1);
    CHECK(scalars["gpuprobe/events_dropped"][s].second == 0);
    CHECK(scalars["ranges/forward/count"][s].second == 10);
    // Durations 0.05, 0.10, ..., 0.50 ms: median 0.275, P99 0.4955 (linear interpolation).
    CHECK(scalars["ranges/forward/p50_ms"][s].second == Approx(0.275));
    CHECK(scalars["ranges/forward/p99_ms"][s].second == Approx(0.4955));
    const tensorboard::HistogramProto& h = histograms["ranges/forward"][s];
    CHECK(h.num() == 10);
    CHECK(h.min() == Approx(0.05));
    CHECK(h.max() == Approx(0.5));
    CHECK(h.sum() == Approx(2.75));
    REQUIRE(h.bucket_size() == h.bucket_limit_size());
    CHECK(h.bucket(0) == 0);  // marks the left edge
    double total = 0;
    for (int b = 0; b < h.bucket_size(); ++b) {
      total += h.bucket(b);
      if (b > 0) CHECK(h.bucket_limit(b) > h.bucket_limit(b - 1));
    }
    CHECK(total == 10);
    CHECK(h.bucket_limit(0) <= h.min());
    CHECK(h.bucket_limit(h.bucket_limit_size() - 1) >= h.max());
  }

  tensorflow::profiler::XSpace space;
  REQUIRE(space.ParseFromString(testing::read_file(only_file(dir, ".xplane.pb").string())));
  CHECK(only_file(dir, ".xplane.pb").parent_path().parent_path().filename() == "profile");
  REQUIRE(space.planes_size() == 2);
  const auto& host = space.planes(0);
  const auto& device = space.planes(1);
  CHECK(host.name() == "/host:CPU");
  CHECK(device.name() == "/device:GPU:0");
  REQUIRE(host.lines_size() == 1);
  CHECK(host.lines(0).id() == 78);
  CHECK(host.lines(0).name() == "trainer");
  CHECK(host.lines(0).timestamp_ns() == Synthetic::kStart);
  std::map<std::string, int> host_names;
  for (const auto& e : host.lines(0).events()) {
    REQUIRE(host.event_metadata().count(e.metadata_id()) == 1);
    host_names[host.event_metadata().at(e.metadata_id()).name()]++;
  }
  CHECK(host_names["forward"] == 30);
  CHECK(host_names["ProfilerStep#2"] == 1);
  REQUIRE(device.lines_size() == 1);
  CHECK(device.lines(0).name() == "Stream #3");
  REQUIRE(device.lines(0).events_size() == 3);
  const auto& kernel = device.lines(0).events(2);
  CHECK(device.event_metadata().at(kernel.metadata_id()).name() == "gemm");
  CHECK(kernel.offset_ps() == 2'200'000'000);
  CHECK(kernel.duration_ps() == 300'000'000);
  std::map<std::string, std::string> stats;
  for (const auto& s : kernel.stats()) {
    const std::string& name = device.stat_metadata().at(s.metadata_id()).name();
    stats[name] = s.has_str_value() ? s.str_value() : std::to_string(s.int64_value());
  }
  CHECK(stats["correlation_id"] == "3");
  CHECK(stats["stream"] == "3");
  CHECK(stats["kernel_details"] ==
        "regs:32 static_shared:0 dynamic_shared:0 grid:64,0,0 block:128,0,0");
  std::map<std::string, std::int64_t> caps;
  for (const auto& s : device.stats())
    caps[device.stat_metadata().at(s.metadata_id()).name()] = s.int64_value();
  CHECK(caps["core_count"] == 132);
  CHECK(caps["compute_cap_major"] == 9);
  CHECK(space.warnings_size() == 0);
  fs::remove_all(dir);
}

TEST_CASE("a step waits for GPU records that reach its end, and for a later batch") {
  Synthetic t;
  sinks::StepSummaries summaries;
  // Step 0's record and its ranges, without its kernel yet.
  std::vector<Event> first(t.events.begin(), t.events.begin() + 11);
  summaries.add(EventBatch{first.data(), first.size(), &t.time, &t.threads});
  CHECK(summaries.take_ready(false).empty());  // not before a later batch
  std::vector<Event> kernel = {Event::from_gpu(t.gpu[0])};
  summaries.add(EventBatch{kernel.data(), kernel.size(), &t.time, &t.threads});
  // GPU records have been seen and reach only 0.3 ms: step 0 (to 1 ms) must wait for more.
  CHECK(summaries.take_ready(false).empty());
  std::vector<Event> later = {Event::from_gpu(t.gpu[2])};
  summaries.add(EventBatch{later.data(), later.size(), &t.time, &t.threads});
  const std::vector<sinks::StepSummary> ready = summaries.take_ready(false);
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].step == 0);
  REQUIRE(ready[0].devices.size() == 1);
  CHECK(ready[0].devices[0].busy_percent == Approx(10.0));
  REQUIRE(ready[0].ranges.size() == 1);
  CHECK(ready[0].ranges[0].count == 10);
  // A range ending inside the summarized step arrives late: counted, not summarized.
  std::vector<Event> late = {Event{EventType::kRange, 0, &kLoad, 10, 20, 0.0}};
  summaries.add(EventBatch{late.data(), late.size(), &t.time, &t.threads});
  CHECK(summaries.late() == 1);
}

TEST_CASE("a live session: one summary per gpuprobe::step(), written while the session runs") {
  const fs::path dir = fs::temp_directory_path() / ("tb_live_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Session session("tensorboard=" + dir.string() + ",flush_ms=2");
  REQUIRE(session.ok());
  for (int i = 0; i < 5; ++i) {
    {
      GPUPROBE_RANGE("work");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    step();
  }
  // Steps reach the file as the collector drains, before the session stops: TensorBoard shows a
  // live run.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::size_t before_stop = read_events(only_file(dir, "events.out.tfevents.")).size();
  CHECK(before_stop >= 2);
  REQUIRE(session.stop().ok());
  const std::vector<tensorboard::Event> events =
      read_events(only_file(dir, "events.out.tfevents."));
  REQUIRE(events.size() == 6);
  for (std::size_t i = 1; i < events.size(); ++i) {
    CHECK(events[i].step() == static_cast<std::int64_t>(i - 1));
    std::map<std::string, float> values;
    for (const auto& v : events[i].summary().value()) values[v.tag()] = v.simple_value();
    CHECK(values["step/time_ms"] >= 2.0f);
    CHECK(values["ranges/work/count"] == 1);
    CHECK(values["ranges/work/p50_ms"] >= 2.0f);
  }
  fs::remove_all(dir);
}

TEST_CASE("without steps the session is one step; unwritable log directories are an error") {
  Synthetic t;
  std::vector<Event> ranges(t.events.begin(), t.events.begin() + 10);
  sinks::StepSummaries summaries(4, 1);
  summaries.add(EventBatch{ranges.data(), ranges.size(), &t.time, &t.threads});
  std::vector<Event> other = {Event{EventType::kRange, 0, &kLoad, 10, 20, 0.0}};
  summaries.add(EventBatch{other.data(), other.size(), &t.time, &t.threads});
  const auto all = summaries.take_ready(true);
  REQUIRE(all.size() == 1);
  CHECK(all[0].step == 0);
  REQUIRE(all[0].ranges.size() == 1);
  CHECK(all[0].ranges[0].count == 4);           // at most 4 samples wait
  CHECK(summaries.samples_dropped() == 6 + 1);  // 6 over the limit, 1 name over the limit

  sinks::TensorBoardSink sink("/proc/gpuprobe-cannot-write-here");
  const Status s = sink.open(t.info);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("/proc/gpuprobe-cannot-write-here") != std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
