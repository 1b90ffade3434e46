// GPU activity in the Chrome trace as Kineto writes it: categories, GPU pid/tid, kernel args,
// ac2g flows, deviceProperties and the GPU process and stream names.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sinks/chrome_trace_sink.h"
#include "support/catch.hpp"

namespace gpuprobe::sinks {
namespace {

using nlohmann::json;

GpuActivity activity(GpuActivityKind kind, const char* name, std::uint64_t start, std::uint64_t end,
                     std::uint32_t correlation) {
  GpuActivity a;
  a.kind = kind;
  a.name = name;
  a.start = start;
  a.end = end;
  a.correlation = correlation;
  return a;
}

json write_trace(const std::vector<GpuActivity>& activities, const GpuStats& gpu) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gpu_events_" + std::to_string(getpid()) + ".json"))
                               .string();
  TraceInfo info;
  info.pid = 4242;
  info.start_wall_ns = 1'764'460'800'000'000'000;  // a whole day: JSON ts count from here
  DeviceInfo device;
  device.id = 0;
  device.name = "NVIDIA H200";
  device.total_global_mem = 150'000'000'000;
  device.compute_major = 9;
  device.num_sms = 132;
  info.devices.push_back(device);
  // One tick is one nanosecond, starting at the session start.
  const TimeBase time(0, info.start_wall_ns, 1.0);
  ChromeTraceSink sink(path);
  REQUIRE(sink.open(info).ok());
  std::vector<Event> events;
  for (const GpuActivity& a : activities) {
    events.push_back(Event::from_gpu(a));
  }
  const std::vector<ThreadInfo> threads;
  REQUIRE(sink.write(EventBatch{events.data(), events.size(), &time, &threads}).ok());
  Stats stats;
  stats.gpu = gpu;
  REQUIRE(sink.close(stats, time).ok());
  std::ifstream in(path);
  json doc = json::parse(in);
  std::filesystem::remove(path);
  return doc;
}

std::vector<json> with(const json& doc, const std::string& key, const std::string& value) {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e.contains(key) && e[key] == value) out.push_back(e);
  }
  return out;
}

TEST_CASE("GPU activity is written with Kineto's categories, tracks, args and flows") {
  GpuActivity launch = activity(GpuActivityKind::kRuntimeApi, "cudaLaunchKernel", 1000, 5000, 42);
  launch.thread_id = 777;
  launch.cbid = 211;
  GpuActivity kernel =
      activity(GpuActivityKind::kKernel, "add_kernel(float*, int)", 8000, 12000, 42);
  kernel.device = 0;
  kernel.context = 1;
  kernel.stream = 7;
  kernel.grid[0] = 128;
  kernel.grid[1] = kernel.grid[2] = 1;
  kernel.block[0] = 256;
  kernel.block[1] = kernel.block[2] = 1;
  kernel.registers_per_thread = 30;
  kernel.static_shared_memory = 16;
  kernel.dynamic_shared_memory = 48;
  static constexpr CallSite kForward{"forward", "", "", 0, 0, Category::kApp};
  kernel.range = &kForward;
  kernel.graph_id = 3;
  kernel.graph_node_id = 9;
  GpuActivity copy =
      activity(GpuActivityKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 20000, 21000, 43);
  copy.stream = 7;
  copy.bytes = 4000;
  GpuActivity set = activity(GpuActivityKind::kMemset, "Memset (Device)", 22000, 22500, 44);
  set.stream = 13;
  set.bytes = 1000;
  GpuActivity sync = activity(GpuActivityKind::kSync, "Stream Sync", 23000, 30000, 45);
  sync.stream = 7;
  GpuActivity driver = activity(GpuActivityKind::kDriverApi, "cuMemAlloc_v2", 31000, 32000, 46);
  driver.thread_id = 555;  // a thread gpuprobe does not know
  launch.os_tid = 1777;    // the launching thread's gettid(), known to gpuprobe
  GpuActivity overhead =
      activity(GpuActivityKind::kOverhead, "CUPTI Overhead: buffer flush", 33000, 34000, 0);
  GpuStats gpu;
  gpu.status = "cupti";
  gpu.records = 7;
  gpu.dropped = 2;
  const json doc = write_trace({launch, kernel, copy, set, sync, driver, overhead}, gpu);

  const json k = with(doc, "cat", "kernel").at(0);
  REQUIRE(k["ph"] == "X");
  REQUIRE(k["name"] == "add_kernel(float*, int)");
  REQUIRE(k["pid"] == 0);
  REQUIRE(k["tid"] == 7);
  REQUIRE(k["ts"].get<double>() == Approx(8.0));
  REQUIRE(k["dur"].get<double>() == Approx(4.0));
  const json& args = k["args"];
  REQUIRE(args["correlation"] == 42);
  REQUIRE(args["device"] == 0);
  REQUIRE(args["context"] == 1);
  REQUIRE(args["stream"] == 7);
  REQUIRE(args["registers per thread"] == 30);
  REQUIRE(args["shared memory"] == 64);
  REQUIRE(args["grid"] == json::array({128, 1, 1}));
  REQUIRE(args["block"] == json::array({256, 1, 1}));
  REQUIRE(args["range"] == "forward");
  REQUIRE(args["graph id"] == 3);
  REQUIRE(args["graph node id"] == 9);

  const json r = with(doc, "cat", "cuda_runtime").at(0);
  REQUIRE(r["pid"] == 4242);
  REQUIRE(r["tid"] == 1777);  // on the thread's own track, with its CPU ranges
  REQUIRE(r["name"] == "cudaLaunchKernel");
  REQUIRE(r["args"]["cbid"] == 211);
  REQUIRE(r["args"]["correlation"] == 42);
  const json d = with(doc, "cat", "cuda_driver").at(0);
  REQUIRE(d["name"] == "cuMemAlloc_v2");
  REQUIRE(d["tid"] == 555);
  bool unknown_thread_named = false;
  for (const json& m : with(doc, "name", "thread_name")) {
    unknown_thread_named |=
        m["tid"] == 555 && m["args"]["name"] == "CUDA API thread (CUPTI id 555)";
  }
  REQUIRE(unknown_thread_named);

  const json c = with(doc, "cat", "gpu_memcpy").at(0);
  REQUIRE(c["args"]["bytes"] == 4000);
  REQUIRE(c["args"]["memory bandwidth (GB/s)"].get<double>() == Approx(4.0));  // 4000 B in 1 us
  REQUIRE(with(doc, "cat", "gpu_memset").at(0)["tid"] == 13);
  const json s = with(doc, "cat", "cuda_sync").at(0);
  REQUIRE(s["args"]["cuda_sync_kind"] == "Stream Sync");
  REQUIRE(with(doc, "cat", "overhead").at(0)["pid"] == -1);

  // One arrow from the launch to its kernel: "s" on the calling thread, "f" on the stream.
  std::map<std::string, json> flow42;
  for (const json& f : with(doc, "cat", "ac2g")) {
    if (f["id"] == 42) flow42[f["ph"]] = f;
  }
  REQUIRE(flow42.size() == 2);
  REQUIRE(flow42["s"]["pid"] == 4242);
  REQUIRE(flow42["s"]["tid"] == 1777);
  REQUIRE(flow42["s"]["ts"].get<double>() == Approx(1.0));
  REQUIRE(flow42["f"]["pid"] == 0);
  REQUIRE(flow42["f"]["tid"] == 7);
  REQUIRE(flow42["f"]["bp"] == "e");
  // cuMemAlloc launches no GPU work: no arrow starts there.
  for (const json& f : with(doc, "cat", "ac2g")) REQUIRE(f["id"] != 46);

  REQUIRE(doc["deviceProperties"].size() == 1);
  REQUIRE(doc["deviceProperties"][0]["name"] == "NVIDIA H200");
  REQUIRE(doc["deviceProperties"][0]["computeMajor"] == 9);
  REQUIRE(doc["deviceProperties"][0]["numSms"] == 132);

  std::map<std::string, json> gpu_meta;
  for (const json& m : with(doc, "ph", "M")) {
    if (m["pid"] == 0)
      gpu_meta[m["name"].get<std::string>() + "/" + std::to_string(m["tid"].get<int>())] = m;
  }
  REQUIRE(gpu_meta.at("process_name/0")["args"]["name"] == "GPU 0");
  REQUIRE(gpu_meta.at("process_labels/0")["args"]["labels"] == "GPU 0");
  REQUIRE(gpu_meta.at("thread_name/7")["args"]["name"] == "stream 7");
  REQUIRE(gpu_meta.at("thread_name/13")["args"]["name"] == "stream 13");

  REQUIRE(doc["gpuprobe"]["gpu"]["status"] == "cupti");
  REQUIRE(doc["gpuprobe"]["gpu"]["records"] == 7);
  REQUIRE(doc["gpuprobe"]["gpu"]["dropped"] == 2);
}

}  // namespace
}  // namespace gpuprobe::sinks
