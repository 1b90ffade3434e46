// The trace readers: what the Chrome and Perfetto sinks write reads back event for event (times,
// names, categories, threads, steps, counters, GPU records and their details, drops), plain and
// gzipped; and corrupt or truncated input gives one error naming the byte offset, never a crash.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "readers/byte_source.h"
#include "readers/chrome_trace_reader.h"
#include "readers/perfetto_trace_reader.h"
#include "readers/trace_builder.h"
#include "readers/trace_file.h"
#include "sinks/chrome_trace_sink.h"
#include "sinks/perfetto_sink.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

// Every event as comparable text: "<kind> <where> <category> <name> <begin> <end> <value|details>".
class RecordingSink : public Sink {
 public:
  Status open(const TraceInfo& info) override {
    info_ = info;
    return {};
  }
  Status write(const EventBatch& batch) override {
    for (const Event& e : batch) {
      const std::int64_t b = batch.time->wall_ns(e.begin), end = batch.time->wall_ns(e.end);
      std::ostringstream line;
      if (e.type == EventType::kGpu) {
        const GpuActivity& a = *e.gpu;
        line << "gpu" << static_cast<int>(a.kind) << " " << a.name << " " << b << " " << end
             << " corr=" << a.correlation;
        if (a.kind == GpuActivityKind::kRuntimeApi) {
          line << " tid=" << a.os_tid << " cbid=" << a.cbid;
        } else {
          line << " dev=" << a.device << " stream=" << a.stream << " grid=" << a.grid[0] << ","
               << a.grid[1] << "," << a.grid[2] << " block=" << a.block[0]
               << " regs=" << a.registers_per_thread << " bytes=" << a.bytes
               << " range=" << (a.range != nullptr ? a.range->name : "-");
        }
      } else {
        line << static_cast<int>(e.type) << " " << (*batch.threads)[e.thread].os_tid << " "
             << static_cast<int>(e.site->category) << " "
             << (e.site->category == Category::kStep ? "step" : e.site->name) << " " << b << " "
             << end << " " << e.value;
      }
      lines_.push_back(line.str());
    }
    return {};
  }
  void update_info(const TraceInfo& info) override { final_ = info; }
  Status close(const Stats& stats, const TimeBase&) override {
    stats_ = stats;
    return {};
  }

  std::vector<std::string> sorted() const {
    std::vector<std::string> v = lines_;
    std::sort(v.begin(), v.end());
    return v;
  }
  TraceInfo info_, final_;  // at open, and as the reader last updated it
  Stats stats_;
  std::vector<std::string> lines_;
};

constexpr CallSite kOuter{"outer", "", "", 0, 0, Category::kApp};
constexpr CallSite kInner{"inner \"quoted\" \xc3\xa9", "", "", 0, 0, Category::kTorch};
constexpr CallSite kMark{"mark", "", "", 0, 0, Category::kGc};
constexpr CallSite kDepth{"queue_depth", "", "", 0, 0, Category::kApp};
// A counter of a category of its own (gpuprobe.watch_gc's): Perfetto once read it back as app.
constexpr CallSite kCollected{"gc collected", "", "", 0, 0, Category::kGc};
constexpr CallSite kStep{"ProfilerStep", "", "", 0, 0, Category::kStep};

struct Synthetic {
  static constexpr std::int64_t kStart = 1'764'460'800'123'456'789;
  TraceInfo info;
  TimeBase time{0, kStart, 1.0};
  std::vector<ThreadInfo> threads = std::vector<ThreadInfo>(2);
  std::vector<GpuActivity> gpu;
  std::vector<Event> events;
  Stats stats;

  Synthetic() {
    info.pid = 900;
    info.process_name = "synthetic";
    info.start_wall_ns = kStart;
    threads[0] = {901, "main", 0, 0, 0};
    threads[1] = {902, "loader", 0, 3, 0};
    gpu.resize(3);
    gpu[0].kind = GpuActivityKind::kRuntimeApi;
    gpu[0].name = "cudaLaunchKernel";
    gpu[0].correlation = 7;
    gpu[0].os_tid = gpu[0].thread_id = 901;
    gpu[0].cbid = 211;
    gpu[0].start = 1500;
    gpu[0].end = 4000;
    gpu[1].kind = GpuActivityKind::kKernel;
    gpu[1].name = "gemm<float>(float*)";
    gpu[1].correlation = 7;
    gpu[1].device = 1;
    gpu[1].stream = 13;
    gpu[1].grid[0] = 64;
    gpu[1].grid[1] = 2;
    gpu[1].grid[2] = 1;
    gpu[1].block[0] = 256;
    gpu[1].registers_per_thread = 40;
    gpu[1].range = &kOuter;
    gpu[1].start = 5000;
    gpu[1].end = 25123;
    gpu[2].kind = GpuActivityKind::kMemcpy;
    gpu[2].name = "Memcpy HtoD (Pinned -> Device)";
    gpu[2].correlation = 8;
    gpu[2].device = 1;
    gpu[2].stream = 14;
    gpu[2].bytes = 1 << 20;
    gpu[2].start = 30000;
    gpu[2].end = 31001;
    events = {
        Event{EventType::kRange, 0, &kInner, 1001, 9999, 0.0},
        Event{EventType::kRange, 0, &kOuter, 1000, 20000, 0.0},
        Event{EventType::kInstant, 1, &kMark, 12345, 12345, 0.0},
        Event{EventType::kCounter, 1, &kDepth, 15000, 15000, 42.5},
        Event{EventType::kCounter, 1, &kCollected, 16000, 16000, 7.0},
        Event{EventType::kRange, 0, &kStep, 0, 40000, 3.0},
    };
    for (const GpuActivity& a : gpu) events.push_back(Event::from_gpu(a));
    stats.threads = threads;
    stats.dropped = 3;
    stats.gpu.status = "cupti";
    stats.gpu.dropped = 2;
  }

  void write(Sink& sink) const {
    REQUIRE(sink.open(info).ok());
    REQUIRE(sink.write(EventBatch{events.data(), events.size(), &time, &threads}).ok());
    REQUIRE(sink.close(stats, time).ok());
  }
};

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / (std::to_string(getpid()) + "_" + name)).string();
}

std::vector<std::string> expected_lines() {
  const Synthetic t;
  RecordingSink direct;
  t.write(direct);
  return direct.sorted();
}

void check_round_trip(const std::string& path, bool perfetto) {
  RecordingSink read;
  readers::TraceFormat format;
  const Status s = readers::read_trace_file(path, read, {}, &format);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(format == (perfetto ? readers::TraceFormat::kPerfetto : readers::TraceFormat::kChrome));
  std::vector<std::string> want = expected_lines();
  std::vector<std::string> got = read.sorted();
  if (perfetto) {
    // Perfetto keeps counters on process-level tracks, not on the thread that set them.
    for (std::string& line : want) {
      if (line.rfind("2 902 ", 0) == 0) line.replace(0, 6, "2 0 ");
    }
    std::sort(want.begin(), want.end());
  }
  CHECK(got == want);
  CHECK(read.info_.pid == 900);
  CHECK(read.stats_.dropped == 3);
  CHECK(read.stats_.gpu.dropped == 2);
  bool named = false;
  for (const ThreadInfo& t : read.stats_.threads) {
    if (t.os_tid == 902) named = t.name == "loader";
  }
  CHECK(named);
}

TEST_CASE("Chrome traces read back event for event, plain and gzipped") {
  for (const std::string name : {"rt.json", "rt.json.gz"}) {
    const std::string path = temp_file(name);
    {
      sinks::ChromeTraceSink sink(path);
      Synthetic().write(sink);
    }
    check_round_trip(path, false);
    fs::remove(path);
  }
}

TEST_CASE("Perfetto traces read back event for event, plain and gzipped") {
  for (const std::string name : {"rt.pftrace", "rt.pftrace.gz"}) {
    const std::string path = temp_file(name);
    {
      sinks::PerfettoSink sink(path);
      Synthetic().write(sink);
    }
    check_round_trip(path, true);
    fs::remove(path);
  }
}

// Writes `t` as Chrome JSON to `chrome`, converts it to Perfetto at `perfetto`, and that back to
// Chrome JSON at `back`.
void write_and_convert_back(const Synthetic& t, const std::string& chrome,
                            const std::string& perfetto, const std::string& back) {
  {
    sinks::ChromeTraceSink sink(chrome);
    t.write(sink);
  }
  {
    sinks::PerfettoSink sink(perfetto);
    REQUIRE(readers::read_trace_file(chrome, sink).ok());
  }
  {
    sinks::ChromeTraceSink sink(back);
    REQUIRE(readers::read_trace_file(perfetto, sink).ok());
  }
}

// Every field of the closing summary survives Chrome -> Perfetto -> Chrome: a conversion keeps
// what the trace says it does not show, and the session facts (clock, NVTX, config, rank).
TEST_CASE("a conversion keeps every statistic and session fact of the summary") {
  Synthetic t;
  t.info.clock = "tsc";
  t.info.nvtx = true;
  t.info.config = "chrome=x.json,cupti=all";
  t.info.rank = 3;
  t.info.world_size = 8;
  t.stats.written = t.events.size();  // what a converter counts as it writes
  t.stats.ring_capacity = 4096;
  t.stats.names_overflowed = 5;
  t.stats.dropped = 9;
  t.stats.dropped_no_ring = 3;
  GpuStats& g = t.stats.gpu;
  g.records = 11, g.dropped = 12, g.buffers_exhausted = 13, g.filtered = 14;
  g.starts_before_launch = 15, g.attributed = 16, g.unattributed = 17, g.untimed = 18;
  const std::string chrome = temp_file("stats.json"), perfetto = temp_file("stats.pftrace"),
                    back = temp_file("stats_back.json");
  write_and_convert_back(t, chrome, perfetto, back);
  using nlohmann::json;
  json original = json::parse(testing::read_file(chrome))["gpuprobe"];
  json converted = json::parse(testing::read_file(back))["gpuprobe"];
  CHECK(original["clock"] == "tsc");
  CHECK(original["config"] == "chrome=x.json,cupti=all");
  CHECK(original["gpu"]["buffers_exhausted"] == 13);
  // Thread rows are the converter's own (it counts what it wrote); the rest must be equal.
  original.erase("threads");
  converted.erase("threads");
  CHECK(converted.dump() == original.dump());
  // The rank: Chrome states it before the events, Perfetto in its closing summary, so a reader
  // of the Perfetto trace learns it at the end (update_info) and the Chrome sink writes it then.
  const json rank = {{"backend", "unknown"}, {"rank", 3}, {"world_size", 8}};
  CHECK(json::parse(testing::read_file(chrome))["distributedInfo"] == rank);
  CHECK(json::parse(testing::read_file(back))["distributedInfo"] == rank);
  RecordingSink read;
  REQUIRE(readers::read_trace_file(perfetto, read).ok());
  CHECK(read.info_.rank == -1);
  CHECK(read.final_.rank == 3);
  CHECK(read.final_.world_size == 8);
  for (const std::string& f : {chrome, perfetto, back}) fs::remove(f);
}

// The four places that named GPU arguments had drifted: the Perfetto writer summed the shared
// memory and left out the context, the graph node and the synchronization arguments. One table
// now drives both writers and both readers.
TEST_CASE("a conversion through Perfetto keeps every GPU argument and device property") {
  Synthetic t;
  t.gpu[1].context = 3;
  t.gpu[1].static_shared_memory = 1024;
  t.gpu[1].dynamic_shared_memory = 4096;
  t.gpu[1].graph_id = 5;
  t.gpu[1].graph_node_id = 77;
  t.gpu[1].declared_bytes = 2e6;
  t.gpu[1].declared_flops = 8e6;
  GpuActivity sync;
  sync.kind = GpuActivityKind::kSync;
  sync.name = "Event Sync";
  sync.sync_kind = SyncKind::kEventSynchronize;
  sync.cuda_event_id = 9;
  sync.correlation = 7;
  sync.device = 1;
  sync.stream = 13;
  sync.start = 26000;
  sync.end = 27000;
  t.gpu.push_back(sync);
  t.events.clear();
  for (const GpuActivity& a : t.gpu) t.events.push_back(Event::from_gpu(a));
  // And the device, every property of it (a Perfetto trace carried none; Chrome's reader five).
  DeviceInfo d;
  d.id = 1, d.name = "NVIDIA H200", d.total_global_mem = 150'000'000'000;
  d.compute_major = 9, d.compute_minor = 0, d.max_threads_per_block = 1024;
  d.max_threads_per_multiprocessor = 2048, d.regs_per_block = 65536;
  d.regs_per_multiprocessor = 65536, d.warp_size = 32, d.shared_mem_per_block = 49152;
  d.shared_mem_per_multiprocessor = 233472, d.num_sms = 132, d.shared_mem_per_block_optin = 232448;
  t.info.devices = {d};
  const std::string chrome = temp_file("args.json"), perfetto = temp_file("args.pftrace"),
                    back = temp_file("args_back.json");
  write_and_convert_back(t, chrome, perfetto, back);
  {
    const nlohmann::json original = nlohmann::json::parse(testing::read_file(chrome));
    const nlohmann::json converted = nlohmann::json::parse(testing::read_file(back));
    CHECK(original["deviceProperties"][0]["sharedMemPerBlockOptin"] == 232448);
    CHECK(converted["deviceProperties"].dump() == original["deviceProperties"].dump());
  }
  const auto gpu_args = [](const std::string& f) {
    std::map<std::string, nlohmann::json> out;
    const nlohmann::json trace = nlohmann::json::parse(testing::read_file(f));
    for (const auto& e : trace["traceEvents"]) {
      if (e.value("ph", "") == "X" && e.contains("args")) out[e.value("name", "")] = e["args"];
    }
    return out;
  };
  const auto original = gpu_args(chrome), converted = gpu_args(back);
  REQUIRE(original.size() == 4);
  CHECK(original.at("gemm<float>(float*)")["graph node id"] == 77);
  CHECK(original.at("Event Sync")["wait_on_cuda_event_id"] == 9);
  for (const auto& [name, args] : original) CHECK(converted.at(name).dump() == args.dump());
  for (const std::string& f : {chrome, perfetto, back}) fs::remove(f);
}

// A category named with name_category() is trace data, not the converting process's state: it
// came back as user_annotation after `gpuprobe convert`.
TEST_CASE("category names travel in the trace through Chrome -> Perfetto -> Chrome") {
  static constexpr CallSite kIo{"read block", "", "", 0, 0, Category::kUser3};
  Synthetic t;
  t.info.category_names.resize(32);
  t.info.category_names[static_cast<unsigned>(Category::kUser3)] = "io";
  t.events.push_back(Event{EventType::kRange, 1, &kIo, 2000, 3000, 0.0});
  const std::string chrome = temp_file("cats.json"), perfetto = temp_file("cats.pftrace"),
                    back = temp_file("cats_back.json");
  write_and_convert_back(t, chrome, perfetto, back);
  for (const std::string& f : {chrome, back}) {
    const nlohmann::json trace = nlohmann::json::parse(testing::read_file(f));
    int found = 0;
    for (const auto& e : trace["traceEvents"]) {
      if (e.value("name", "") == "read block") {
        CHECK(e["cat"] == "io");
        ++found;
      }
      if (e.value("name", "") == "outer") CHECK(e["cat"] == "user_annotation");
    }
    CHECK(found == 1);
  }
  for (const std::string& f : {chrome, perfetto, back}) fs::remove(f);
}

TEST_CASE("Kineto's forms: bare arrays, B/E pairs, string ids, counters with several series") {
  const std::string json =
      R"J([{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"thread 2 (worker)"}},
          {"ph":"B","name":"a","cat":"cpu_op","pid":1,"tid":2,"ts":10.5},
          {"ph":"B","name":"b","pid":1,"tid":2,"ts":11},
          {"ph":"E","pid":1,"tid":2,"ts":12.25},
          {"ph":"E","pid":1,"tid":2,"ts":20},
          {"ph":"C","name":"mem","pid":1,"tid":"x","ts":13,"args":{"used":5,"free":7}},
          {"ph":"X","name":"ProfilerStep#12","pid":1,"tid":2,"ts":10,"dur":30},
          {"ph":"X","name":"ProfilerStep#12","cat":"gpu_user_annotation","pid":0,"tid":7,"ts":12,"dur":20},
          {"ph":"M","name":"process_sort_index","pid":1,"args":{"sort_index":59903333333333333333333}},
          {"ph":"s","id":1,"pid":1,"tid":2,"ts":11}])J";
  auto in = readers::ByteSource::from_memory(json, "k.json");
  RecordingSink read;
  const Status s = readers::read_chrome_trace(*in, read);
  INFO(s.message());
  REQUIRE(s.ok());
  const std::vector<std::string> got = read.sorted();
  REQUIRE(got.size() == 6);
  CHECK(got[0] == "0 2 0 b 11000 12250 0");
  CHECK(got[1] == "0 2 1 step 10000 40000 12");
  CHECK(got[2] == "0 2 3 a 10500 20000 0");
  // The GPU timeline's copy of the step: GPU-side (cuda), not a second step.
  CHECK(got[3] == "0 7 7 ProfilerStep#12 12000 32000 0");
  CHECK(got[4].rfind("2 ", 0) == 0);
  CHECK(got[4].find("mem.free 13000 13000 7") != std::string::npos);
  CHECK(got[5].find("mem.used 13000 13000 5") != std::string::npos);
  CHECK(read.stats_.threads[0].name == "worker");
}

TEST_CASE("numbers out of range saturate; negative step numbers are not steps") {
  const std::string json =
      R"J({"distributedInfo": {"rank": 1e300},
           "traceEvents": [
             {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":1,"dur":1,
              "args":{"correlation":1e300,"bytes":-5,"stream":-1e30}},
             {"ph":"X","name":"ProfilerStep#-3","pid":1,"tid":2,"ts":1,"dur":1},
             {"ph":"C","name":"c","pid":1,"tid":2,"ts":2,"args":{"c":1.5e308}}]})J";
  auto in = readers::ByteSource::from_memory(json, "n.json");
  RecordingSink read;
  const Status s = readers::read_chrome_trace(*in, read);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(read.info_.rank == INT32_MAX);
  const std::vector<std::string> got = read.sorted();
  REQUIRE(got.size() == 3);
  CHECK(got[0].find("ProfilerStep#-3") != std::string::npos);  // a range named so, not a step
  CHECK(got[2].find("corr=4294967295") != std::string::npos);
  CHECK(got[2].find("stream=0 ") != std::string::npos);
  CHECK(got[2].find("bytes=0 ") != std::string::npos);
}

TEST_CASE("malformed JSON: one error with the file, the byte offset and what was expected") {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"traceEvents": [{"ph": "X", "ts": 1,)",
       "t.json: byte 37: expected a string, found the end of the file"},
      {R"({"traceEvents": [{"ph": "X" "ts": 1}]})",
       "t.json: byte 28: expected ',' or '}', found '\"'"},
      {R"({"traceEvents": [{"ph": "X", "ts": 1e999}]})",
       "t.json: byte 35: expected a time in microseconds (\"ts\") that int64 ns hold, found "
       "'1e999'"},
      {R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": -2}]})",
       "t.json: byte 45: expected a non-negative duration (\"dur\")"},
      {R"({"traceEvents": [{"ph": "X", "ts": .5}]})",
       "t.json: byte 35: expected a time in microseconds (\"ts\") that int64 ns hold, found "
       "'.5'"},
      {R"({"traceEvents": [{"ph": "X", "ts": 9000000000000000}]})",
       "t.json: byte 17: expected times within 146 years of 1970"},
      {R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 1},
                           {"ph": "X", "ts": 4611686018427387.904, "dur": 1}]})",
       "t.json: byte 76: expected times within 146 years of 1970 and of the first event"},
      {R"({"traceEvents": [{"ph": "X", "dur": 1}]})",
       "t.json: byte 17: expected an event with a \"ts\" field"},
      {R"({"traceEvents": [{"ts": 1}]})", "t.json: byte 17: expected an event with a \"ph\" field"},
      {R"({"traceEvents": []} x)",
       "t.json: byte 20: expected the end of the file after the trace, found 'x'"},
      {"\x01", "t.json: byte 0: expected '{' or '[' starting a Chrome trace, found byte 0x01"},
      {R"({"baseTimeNanoseconds": 17614460800000000000, "traceEvents": []})",
       "t.json: byte 24: expected baseTimeNanoseconds within 146 years of 1970"},
  };
  for (const Case& c : cases) {
    auto in = readers::ByteSource::from_memory(c.json, "t.json");
    RecordingSink read;
    const Status s = readers::read_chrome_trace(*in, read);
    INFO(c.json << "\n" << s.message());
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().rfind(c.message, 0) == 0);
  }
}

// Reads `data` with `read`, which must end, report success or one error naming a byte offset, and
// close the sink either way.
template <class Read>
void read_survives(const std::string& data, Read read, int* errors) {
  auto in = readers::ByteSource::from_memory(data, "f");
  RecordingSink sink;
  const Status s = read(*in, sink);
  if (!s.ok()) {
    ++*errors;
    CHECK(s.message().rfind("f: byte ", 0) == 0);
  }
}

TEST_CASE("every truncation and thousands of corruptions of real traces are rejected cleanly") {
  const std::string chrome_path = temp_file("c.json"), perfetto_path = temp_file("p.pftrace");
  {
    sinks::ChromeTraceSink c(chrome_path);
    Synthetic().write(c);
    sinks::PerfettoSink p(perfetto_path);
    Synthetic().write(p);
  }
  const std::string chrome = testing::read_file(chrome_path),
                    perfetto = testing::read_file(perfetto_path);
  fs::remove(chrome_path);
  fs::remove(perfetto_path);
  const auto read_chrome = [](readers::ByteSource& in, Sink& s) {
    return readers::read_chrome_trace(in, s);
  };
  const auto read_perfetto = [](readers::ByteSource& in, Sink& s) {
    return readers::read_perfetto_trace(in, s);
  };

  int errors = 0;
  for (std::size_t n = 0; n < chrome.size(); ++n)
    read_survives(chrome.substr(0, n), read_chrome, &errors);
  // Cut anywhere before its closing brace (the last byte is a newline), the JSON is incomplete.
  CHECK(errors == static_cast<int>(chrome.size()) - 1);
  errors = 0;
  for (std::size_t n = 0; n < perfetto.size(); ++n)
    read_survives(perfetto.substr(0, n), read_perfetto, &errors);
  CHECK(errors > static_cast<int>(perfetto.size()) / 2);  // cuts between packets are valid traces

  std::mt19937 rng(12345);
  for (int i = 0; i < 3000; ++i) {
    std::string c = chrome, p = perfetto;
    for (int k = 0; k < 3; ++k) {
      c[rng() % c.size()] = static_cast<char>(rng());
      p[rng() % p.size()] = static_cast<char>(rng());
    }
    read_survives(c, read_chrome, &errors);
    read_survives(p, read_perfetto, &errors);
  }
}

TEST_CASE("files that are not traces, or not there") {
  RecordingSink sink;
  Status s = readers::read_trace_file("/nonexistent/trace.json", sink);
  CHECK(s.message().rfind("/nonexistent/trace.json: cannot open", 0) == 0);
  const std::string path = temp_file("empty.json");
  std::ofstream(path).close();
  s = readers::read_trace_file(path, sink);
  CHECK(s.message() == path +
                           ": byte 0: expected a Chrome trace ('{' or '['), a Perfetto trace (a "
                           "packet, byte 0x0a), a flight window (GPWINDOW) or an MLIR timing "
                           "report ('===-'), found an empty file");
  fs::remove(path);
  s = readers::read_trace_file(fs::temp_directory_path().string(), sink);
  CHECK(s.message().find("not a regular file") != std::string::npos);
}

TEST_CASE("a FIFO or a device where a trace belongs is refused at once, never waited on") {
  // Opening a FIFO with no writer would block forever; /dev/zero would never end.
  const std::string fifo = temp_file("fifo.json");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  RecordingSink sink;
  Status s = readers::read_trace_file(fifo, sink);
  CHECK(s.message() == fifo + ": not a regular file (a FIFO)");
  fs::remove(fifo);
  s = readers::read_trace_file("/dev/zero", sink);
  CHECK(s.message() == "/dev/zero: not a regular file (a character device)");
  std::unique_ptr<readers::ByteSource> in;
  CHECK_FALSE(readers::ByteSource::open_file("/dev/null", &in).ok());
}

TEST_CASE("past the name cap, new names share one call site: nothing is kept per event") {
  RecordingSink sink;
  readers::TraceBuilder builder(sink);
  REQUIRE(builder.open(TraceInfo{}).ok());
  std::set<const CallSite*> sites;
  const std::size_t names = readers::TraceBuilder::kMaxNames + 10000;
  for (std::size_t i = 0; i < names; ++i) {
    sites.insert(builder.site("n" + std::to_string(i), Category::kApp));
    if (i >= readers::TraceBuilder::kMaxNames)
      sites.insert(builder.site("m" + std::to_string(i), Category::kUser1));
  }
  // The 65 536 names kept, and one site per category (app, user1) for all the others.
  CHECK(sites.size() == readers::TraceBuilder::kMaxNames + 2);
  const CallSite* capped = builder.site("another new name", Category::kApp);
  CHECK(std::string(capped->name) == readers::TraceBuilder::kTooManyNames);
  CHECK(capped == builder.site("yet another", Category::kApp));
  CHECK(capped != builder.site("yet another", Category::kUser1));
  CHECK(builder.finish(Status(), TraceInfo{}, Stats{}).ok());
  CHECK(sink.stats_.names_overflowed == 2 * 10000 + 3);
}

}  // namespace
}  // namespace gpuprobe
