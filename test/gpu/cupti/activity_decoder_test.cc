// CUPTI records built with the real structs from CUPTI's headers, decoded field by field.
#include "gpu/cupti/activity_decoder.h"

#include <cstring>
#include <string>
#include <utility>

#include "support/catch.hpp"

namespace gpuprobe::cupti {
namespace {

CUptiResult fake_callback_name(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    *name = "cudaLaunchKernel_v7000";
    return CUPTI_SUCCESS;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
    *name = "cuLaunchKernel";
    return CUPTI_SUCCESS;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuKernelGetName) {
    *name = "cuKernelGetName";
    return CUPTI_SUCCESS;
  }
  static const std::pair<CUpti_CallbackId, const char*> kRuntimeNames[] = {
      {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, "cudaGetLastError_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020, "cudaEventCreate_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020, "cudaEventDestroy_v3020"}};
  for (const auto& [id, text] : kRuntimeNames) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == id) {
      *name = text;
      return CUPTI_SUCCESS;
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

template <class Record>
Record zeroed(CUpti_ActivityKind kind) {
  Record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

const CUpti_Activity& as_activity(const void* record) {
  return *static_cast<const CUpti_Activity*>(record);
}

TEST_CASE("Kernel records keep every field, with the name demangled") {
  auto k = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 1000;
  k.end = 1500;
  k.name = "_Z10add_kernelPfS_i";
  k.correlationId = 42;
  k.deviceId = 1;
  k.contextId = 3;
  k.streamId = 7;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.graphId = 9;
  k.graphNodeId = 77;
  ActivityDecoder decoder(fake_callback_name);
  GpuActivity a;
  REQUIRE(decoder.decode(as_activity(&k), &a));
  REQUIRE(a.kind == GpuActivityKind::kKernel);
  REQUIRE(a.start == 1000);
  REQUIRE(a.end == 1500);
  REQUIRE(std::string(a.name) == "add_kernel(float*, float*, int)");
  REQUIRE(a.correlation == 42);
  REQUIRE(a.device == 1);
  REQUIRE(a.context == 3);
  REQUIRE(a.stream == 7);
  REQUIRE((a.grid[0] == 128 && a.grid[1] == 2 && a.grid[2] == 1));
  REQUIRE((a.block[0] == 256 && a.block[1] == 1 && a.block[2] == 1));
  REQUIRE(a.registers_per_thread == 32);
  REQUIRE(a.static_shared_memory == 1024);
  REQUIRE(a.dynamic_shared_memory == 2048);
  REQUIRE(a.graph_id == 9);
  REQUIRE(a.graph_node_id == 77);
  // The same kernel decodes to the same interned name.
  GpuActivity again;
  REQUIRE(decoder.decode(as_activity(&k), &again));
  REQUIRE(again.name == a.name);
  // A name that is not mangled C++ stays as it is.
  k.name = "plain_c_kernel";
  REQUIRE(decoder.decode(as_activity(&k), &a));
  REQUIRE(std::string(a.name) == "plain_c_kernel");
}

TEST_CASE("Memcpy and memset records carry sizes, directions and memory kinds") {
  ActivityDecoder decoder(fake_callback_name);
  auto m = zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 13;
  m.correlationId = 5;
  GpuActivity a;
  REQUIRE(decoder.decode(as_activity(&m), &a));
  REQUIRE(a.kind == GpuActivityKind::kMemcpy);
  REQUIRE(std::string(a.name) == "Memcpy HtoD (Pinned -> Device)");
  REQUIRE(a.bytes == (1u << 20));
  REQUIRE(a.copy_kind == MemcpyKind::kHtoD);
  REQUIRE(a.src_kind == MemoryKind::kPinned);
  REQUIRE(a.dst_kind == MemoryKind::kDevice);
  REQUIRE(a.stream == 13);
  REQUIRE(a.correlation == 5);
  REQUIRE((a.start == 10 && a.end == 20));

  auto p = zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.bytes = 4096;
  p.deviceId = 1;
  p.start = 30;
  p.end = 40;
  REQUIRE(decoder.decode(as_activity(&p), &a));
  REQUIRE(std::string(a.name) == "Memcpy PtoP (Device -> Device)");
  REQUIRE(a.copy_kind == MemcpyKind::kPtoP);
  REQUIRE(a.device == 1);

  auto s = zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.bytes = 512;
  s.start = 30;
  s.end = 31;
  s.streamId = 7;
  s.correlationId = 6;
  REQUIRE(decoder.decode(as_activity(&s), &a));
  REQUIRE(a.kind == GpuActivityKind::kMemset);
  REQUIRE(std::string(a.name) == "Memset (Device)");
  REQUIRE(a.bytes == 512);
  REQUIRE(a.correlation == 6);
}

TEST_CASE(
    "API records are named without CUPTI's version suffix; unread calls are dropped and counted") {
  ActivityDecoder decoder(fake_callback_name);
  auto api = zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  api.start = 100;
  api.end = 140;
  api.processId = 1234;
  api.threadId = 5678;
  api.correlationId = 42;
  GpuActivity a;
  REQUIRE(decoder.decode(as_activity(&api), &a));
  REQUIRE(a.kind == GpuActivityKind::kRuntimeApi);
  REQUIRE(std::string(a.name) == "cudaLaunchKernel");
  REQUIRE(a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  REQUIRE(a.thread_id == 5678);
  REQUIRE(a.process_id == 1234);
  REQUIRE(a.correlation == 42);

  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  REQUIRE(decoder.decode(as_activity(&api), &a));
  REQUIRE(a.kind == GpuActivityKind::kDriverApi);
  REQUIRE(std::string(a.name) == "cuLaunchKernel");

  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = 99999;  // unknown to the name function
  REQUIRE(decoder.decode(as_activity(&api), &a));
  REQUIRE(std::string(a.name) == "runtime API 99999");

  for (CUpti_CallbackId noise : {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020}) {
    api.cbid = noise;
    REQUIRE_FALSE(decoder.decode(as_activity(&api), &a));
  }
  REQUIRE(decoder.filtered() == 4);
  // Driver calls the runtime makes for itself are noise too.
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.cbid = CUPTI_DRIVER_TRACE_CBID_cuKernelGetName;
  REQUIRE_FALSE(decoder.decode(as_activity(&api), &a));
  REQUIRE(decoder.filtered() == 5);

  // With all_api nothing is dropped.
  ActivityDecoder everything(fake_callback_name, true);
  REQUIRE(everything.decode(as_activity(&api), &a));
  REQUIRE(std::string(a.name) == "cuKernelGetName");
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;
  REQUIRE(everything.decode(as_activity(&api), &a));
  REQUIRE(everything.filtered() == 0);
}

TEST_CASE("Sync records find their device through the context; overhead records decode") {
  ActivityDecoder decoder(fake_callback_name);
  auto k = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = "k";
  k.deviceId = 2;
  k.contextId = 8;
  k.start = 1;
  k.end = 2;
  GpuActivity a;
  REQUIRE(decoder.decode(as_activity(&k), &a));

  auto s = zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.contextId = 8;
  s.streamId = 7;
  s.correlationId = 11;
  s.start = 1;
  s.end = 9;
  REQUIRE(decoder.decode(as_activity(&s), &a));
  REQUIRE(a.kind == GpuActivityKind::kSync);
  REQUIRE(std::string(a.name) == "Stream Sync");
  REQUIRE(a.sync_kind == SyncKind::kStreamSynchronize);
  REQUIRE(a.device == 2);
  REQUIRE(a.stream == 7);
  REQUIRE(a.correlation == 11);

  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.streamId = 0xFFFFFFFFu;
  REQUIRE(decoder.decode(as_activity(&s), &a));
  REQUIRE(std::string(a.name) == "Context Sync");
  REQUIRE(a.stream == 0);

  auto o = zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.start = 5;
  o.end = 6;
  REQUIRE(decoder.decode(as_activity(&o), &a));
  REQUIRE(a.kind == GpuActivityKind::kOverhead);
  REQUIRE(std::string(a.name) == "CUPTI Overhead: buffer flush");
}

TEST_CASE("GPU work without timestamps is not decoded and is counted") {
  ActivityDecoder decoder(fake_callback_name);
  auto k = zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = "_Z10add_kernelPfS_i";
  GpuActivity a;
  REQUIRE_FALSE(decoder.decode(as_activity(&k), &a));  // start 0: never timed
  k.start = 2000;
  k.end = 1000;
  REQUIRE_FALSE(decoder.decode(as_activity(&k), &a));  // ends before it starts
  REQUIRE(decoder.untimed() == 2);
  k.end = 2500;
  REQUIRE(decoder.decode(as_activity(&k), &a));
  REQUIRE(decoder.untimed() == 2);
}

TEST_CASE("Kinds gpuprobe does not record are skipped") {
  ActivityDecoder decoder(fake_callback_name);
  auto marker = zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_MARKER);
  GpuActivity a;
  REQUIRE_FALSE(decoder.decode(as_activity(&marker), &a));
  REQUIRE(decoder.filtered() == 0);
}

}  // namespace
}  // namespace gpuprobe::cupti
