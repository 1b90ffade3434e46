// Kineto traces of every vocabulary, PyTorch 1.8 to today, CUDA, ROCm, MTIA and XPU, read into
// the report: GPU work is GPU work (never CPU ranges), launches are matched to their kernels by
// the correlation argument whether or not flows are present, and since-1970 times keep every
// nanosecond. Each fixture is written in the shape its writer emits; the source is named above it.
#include <memory>
#include <string>
#include <vector>

#include "analysis/trace_report.h"
#include "formats/kineto.h"
#include "readers/byte_source.h"
#include "readers/chrome_trace_reader.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

struct Read {
  std::unique_ptr<analysis::TraceReport> report = std::make_unique<analysis::TraceReport>();
  const analysis::ReportResult& r() const { return report->result(); }
};

Read report_of(const std::string& json) {
  Read out;
  auto in = readers::ByteSource::from_memory(json, "k.json");
  const Status s = readers::read_chrome_trace(*in, *out.report);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

// Every event as read, GPU activity included, with names copied while the reader keeps them.
struct Seen {
  EventType type;
  std::string name;
  Category category;  // ranges
  std::int64_t os_tid, begin_ns, end_ns;
};

class SeenSink : public Sink {
 public:
  Status open(const TraceInfo&) override { return {}; }
  Status write(const EventBatch& batch) override {
    for (const Event& e : batch) {
      const bool gpu = e.type == EventType::kGpu;
      seen.push_back({e.type, gpu ? e.gpu->name : e.site->name,
                      gpu ? Category::kCuda : e.site->category,
                      gpu ? e.gpu->os_tid : (*batch.threads)[e.thread].os_tid,
                      batch.time->wall_ns(e.begin), batch.time->wall_ns(e.end)});
    }
    return {};
  }
  Status close(const Stats&, const TimeBase&) override { return {}; }
  std::vector<Seen> seen;
};

std::vector<Seen> events_of(const std::string& json) {
  SeenSink sink;
  auto in = readers::ByteSource::from_memory(json, "k.json");
  REQUIRE(readers::read_chrome_trace(*in, sink).ok());
  return sink.seen;
}

// pytorch/kineto libkineto/src/output_json.cpp as of 2021-02 (4864f568), PyTorch 1.8's: the
// capitalised categories, integer µs since 1970, quoted thread ids, GPU threads "stream N", flows
// "async"/"launch" (here left out: the correlation argument links a launch to its work).
constexpr char kPyTorch18[] = R"J({"schemaVersion": 1, "traceEvents": [
  {"name": "process_name", "ph": "M", "ts": 1616161616000000, "pid": 4242, "tid": 0,
   "args": {"name": "python3"}},
  {"name": "thread_name", "ph": "M", "ts": 1616161616000000, "pid": 4242, "tid": "4242",
   "args": {"name": "thread 4242 (python3)"
}
},
  {"ph": "X", "cat": "Operator", "name": "aten::cudnn_convolution", "pid": 4242, "tid": "4242",
   "ts": 1616161616000100, "dur": 60,
   "args": {"Input dims": [[8, 3, 32, 32]], "Device": 0, "External id": 3,
            "Trace name": "PyTorch Profiler", "Trace iteration": 0}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": "4242",
   "ts": 1616161616000110, "dur": 10,
   "args": {"cbid": 211, "correlation": 17, "external id": 3, "external ts": 1616161616000100}},
  {"ph": "X", "cat": "Kernel",
   "name": "void cudnn::cnn::conv2d_grouped_direct_kernel<float, float, float>", "pid": 0,
   "tid": "stream 7", "ts": 1616161616000130, "dur": 40,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 17,
            "external id": 3, "registers per thread": 32, "shared memory": 0,
            "warps per SM": 1.5, "grid": [4, 1, 1], "block": [128, 1, 1]}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemsetAsync", "pid": 4242, "tid": "4242",
   "ts": 1616161616000180, "dur": 5,
   "args": {"cbid": 51, "correlation": 18, "external id": 4, "external ts": 1616161616000175}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7",
   "ts": 1616161616000190, "dur": 2,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 18, "external id": 4,
            "bytes": 4096, "memory bandwidth (GB/s)": 2.048}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 4242, "tid": "4242",
   "ts": 1616161616000200, "dur": 8,
   "args": {"cbid": 41, "correlation": 19, "external id": 5, "external ts": 1616161616000195}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0,
   "tid": "stream 7", "ts": 1616161616000210, "dur": 4,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 19, "external id": 5,
            "bytes": 4096, "memory bandwidth (GB/s)": 1.024}},
  {"ph": "X", "cat": "User", "name": "forward", "pid": 0, "tid": "stream 7 user",
   "ts": 1616161616000130, "dur": 84, "args": {"External id": 2}},
  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
   "ts": 1616161616000300}
]
})J";

TEST_CASE("PyTorch 1.8-1.9: capitalised categories are GPU work and API calls") {
  const Read read = report_of(kPyTorch18);
  const analysis::GpuIdleResult& gpu = read.r().gpu;
  CHECK(read.r().verdict.find("CPU only") == std::string::npos);
  CHECK(gpu.kernels == 1);
  CHECK(gpu.launches == 1);  // by the correlation argument, no flow events
  CHECK(gpu.launch_delay_p50_us == Approx(10.0).margin(0.2));  // 130 - 120 µs
  REQUIRE(gpu.streams.size() == 1);
  CHECK(gpu.streams[0].device == 0);
  CHECK(gpu.streams[0].stream == 7);  // the "stream" argument, not the quoted "stream 7"
  CHECK(gpu.streams[0].copies == 2);  // the memset and the memcpy
  // The kernel is not a CPU range; the operator is torch's, the annotation the GPU's copy.
  for (const Seen& e : events_of(kPyTorch18)) {
    if (e.type == EventType::kRange && e.name == "aten::cudnn_convolution")
      CHECK(e.category == Category::kTorch);
    if (e.type == EventType::kRange) CHECK(e.name.find("cudnn::cnn") == std::string::npos);
    if (e.name == "forward") CHECK(e.category == Category::kCuda);
    if (e.name == "cudaLaunchKernel") CHECK(e.os_tid == 4242);  // "4242" is thread 4242
  }
}

// Kineto of 2022-10 to 2024 (PyTorch 1.13-2.3): lowercase categories, "ac2g" flows, wall-clock
// µs since 1970 with three decimals (the ns digits), cuda_driver launches (Triton's cuLaunch).
constexpr char kPyTorch2[] = R"J({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 77, "tid": 77,
   "ts": 1712345678901234.567, "dur": 20.001, "args": {"External id": 9}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": 77,
   "ts": 1712345678901240.123, "dur": 5.5, "args": {"cbid": 211, "correlation": 31}},
  {"ph": "s", "id": 31, "pid": 77, "tid": 77, "ts": 1712345678901240.123, "cat": "ac2g",
   "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_f16f16_f32", "pid": 0, "tid": 7,
   "ts": 1712345678901250.001, "dur": 100.999,
   "args": {"device": 0, "stream": 7, "correlation": 31, "grid": [8, 1, 1],
            "block": [256, 1, 1]}},
  {"ph": "f", "id": 31, "pid": 0, "tid": 7, "ts": 1712345678901250.001, "cat": "ac2g",
   "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 77, "tid": 77,
   "ts": 1712345678901260.000, "dur": 3.25, "args": {"cbid": 307, "correlation": 32}},
  {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7,
   "ts": 1712345678901351.002, "dur": 1.5, "args": {"device": 0, "stream": 7,
   "correlation": 32}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)",
               "pid" : 0, "tid" : 7, "ts" : 1712345678901360.000, "dur" : 0.75, "args" : {
  "device" : 0, "stream" : 7, "correlation" : 33, "bytes" : 64
}
}
]
})J";

TEST_CASE("PyTorch 2.x: since-1970 times to the nanosecond, driver launches, flows ignored") {
  const std::vector<Seen> events = events_of(kPyTorch2);
  bool kernel = false;
  for (const Seen& e : events) {
    if (e.name != "sm90_xmma_gemm_f16f16_f32") continue;
    kernel = true;
    CHECK(e.begin_ns == 1712345678901250001LL);  // a double gives ...250048
    CHECK(e.end_ns == 1712345678901351000LL);
  }
  CHECK(kernel);
  const Read read = report_of(kPyTorch2);
  CHECK(read.r().gpu.kernels == 2);
  CHECK(read.r().gpu.launches == 2);
  CHECK(read.r().gpu.streams.at(0).copies == 1);
  CHECK(read.r().gpu.launch_delay_max_us == Approx(87.75).margin(1.0));  // 351.002 - 263.25
}

// ROCm: Kineto's roctracer/rocprofiler back ends write HIP calls under "cuda_runtime" and GPU
// work under "kernel"/"gpu_memcpy" (pytorch/kineto RocprofActivity.h); launches hipLaunchKernel,
// hipExtModuleLaunchKernel, copies hipMemcpyWithStream (the names HTA matches for AMD GPUs).
constexpr char kRocm[] = R"J({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": 9,
   "ts": 1000.000, "dur": 4.000, "args": {"cid": 1, "correlation": 101}},
  {"ph": "X", "cat": "kernel",
   "name": "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB1_ISA942", "pid": 2,
   "tid": 1, "ts": 1010.000, "dur": 50.000, "args": {"device": 2, "stream": 1,
   "correlation": 101}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 9, "tid": 9,
   "ts": 1100.000, "dur": 4.000, "args": {"correlation": 102}},
  {"ph": "X", "cat": "kernel", "name": "MIOpenBatchNormFwdTrainSpatial", "pid": 2, "tid": 1,
   "ts": 1110.000, "dur": 10.000, "args": {"device": 2, "stream": 1, "correlation": 102}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 9, "tid": 9,
   "ts": 1130.000, "dur": 20.000, "args": {"correlation": 103}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "CopyDeviceToHost", "pid": 2, "tid": 1,
   "ts": 1135.000, "dur": 10.000, "args": {"device": 2, "stream": 1, "correlation": 103,
   "bytes": 1024}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamSynchronize", "pid": 9, "tid": 9,
   "ts": 1150.000, "dur": 30.000, "args": {"correlation": 104}}
]})J";

TEST_CASE("ROCm: hip* launches, copies and syncs are where the CUDA ones are") {
  using formats::ApiRole;
  CHECK(formats::api_role("hipLaunchKernel") == ApiRole::kLaunch);
  CHECK(formats::api_role("hipExtLaunchKernel") == ApiRole::kLaunch);
  CHECK(formats::api_role("hipModuleLaunchKernel") == ApiRole::kLaunch);
  CHECK(formats::api_role("hipExtModuleLaunchKernel") == ApiRole::kLaunch);
  CHECK(formats::api_role("hipGraphLaunch") == ApiRole::kLaunch);
  CHECK(formats::api_role("hipMemcpyAsync") == ApiRole::kCopy);
  CHECK(formats::api_role("hipMemsetAsync") == ApiRole::kSet);
  CHECK(formats::api_role("hipStreamSynchronize") == ApiRole::kSync);
  CHECK(formats::api_role("hipDeviceSynchronize") == ApiRole::kSync);
  CHECK(formats::api_role("hipEventSynchronize") == ApiRole::kSync);
  CHECK(formats::api_role("hipStreamWaitEvent") == ApiRole::kStreamWait);
  CHECK(formats::api_role("hipMalloc") == ApiRole::kOther);
  CHECK(formats::api_role("cudaLaunchKernel") == ApiRole::kLaunch);
  CHECK(formats::api_role("cudaStreamSynchronize") == ApiRole::kSync);

  const Read read = report_of(kRocm);
  const analysis::GpuIdleResult& gpu = read.r().gpu;
  CHECK(gpu.kernels == 2);
  CHECK(gpu.launches == 2);
  CHECK(gpu.launch_delay_p50_us == Approx(6.0).margin(0.2));  // 1010 - 1004, 1110 - 1104
  REQUIRE(gpu.streams.size() == 1);
  CHECK(gpu.streams[0].device == 2);
  // The second kernel and the copy waited for their launches (at 1100 and 1130 µs, after the
  // work before them ended at 1060 and 1120): host wait, 50 + 15 µs, not "other".
  CHECK(gpu.streams[0].host_wait_ns == 65000);
  CHECK(gpu.streams[0].other_idle_ns == 0);
}

// MTIA: device work under "mtia_ccp_events", runtime calls under "mtia_runtime", a kernel
// launched by "runFunction - job_prep_and_submit_for_execution" (kineto ActivityType.h; HTA's
// trace_symbol_table.py and types.py match the same names).
constexpr char kMtia[] = R"J({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "mtia_runtime", "name": "runFunction - job_prep_and_submit_for_execution",
   "pid": 5, "tid": 5, "ts": 2000.000, "dur": 12.000, "args": {"correlation": 7}},
  {"ph": "X", "cat": "mtia_ccp_events", "name": "fused_linear_relu", "pid": 1, "tid": 3,
   "ts": 2020.000, "dur": 30.000, "args": {"device": 1, "stream": 3, "correlation": 7}}
]})J";

// Intel XPU: Kineto's XPUPTI back end, "xpu_runtime" calls (unified runtime names) and "kernel".
constexpr char kXpu[] = R"J({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "xpu_runtime", "name": "urEnqueueKernelLaunch", "pid": 5, "tid": 5,
   "ts": 2000.000, "dur": 12.000, "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "at::native::xpu::VectorizedElementwiseKernel", "pid": 1,
   "tid": 3, "ts": 2020.000, "dur": 30.000, "args": {"device": 1, "stream": 3,
   "correlation": 7}}
]})J";

TEST_CASE("other accelerators: MTIA and XPU activity is device work on its device") {
  for (const char* json : {kMtia, kXpu}) {
    INFO(json);
    const Read read = report_of(json);
    CHECK(read.r().verdict.find("CPU only") == std::string::npos);
    CHECK(read.r().gpu.kernels == 1);
    CHECK(read.r().gpu.launches == 1);
    REQUIRE(read.r().gpu.streams.size() == 1);
    CHECK(read.r().gpu.streams[0].device == 1);
    for (const Seen& e : events_of(json)) CHECK(e.type == EventType::kGpu);
  }
}

TEST_CASE("one table: every Kineto name reads back as what gpuprobe writes for its kind") {
  for (const formats::KinetoCategory& c : formats::kineto_categories()) {
    CAPTURE(c.name);
    REQUIRE(formats::find_kineto_category(c.name) == &c);  // no name twice
    GpuActivityKind kind;
    CHECK(formats::gpu_kind_of_category(c.name, &kind) == c.gpu);
    if (c.gpu) {
      CHECK(kind == c.kind);
      GpuActivityKind back;
      REQUIRE(formats::gpu_kind_of_category(formats::chrome_gpu_category(c.kind), &back));
      CHECK(back == c.kind);
    }
  }
  GpuActivityKind kind;
  CHECK_FALSE(formats::gpu_kind_of_category("cpu_op", &kind));
  CHECK_FALSE(formats::gpu_kind_of_category("KERNEL", &kind));  // matched exactly
}

}  // namespace
}  // namespace gpuprobe
