// The API calls a session records: what the readers of a trace use, by CUPTI's names.
#include "gpu/cupti/api_selection.h"

#include "support/catch.hpp"

namespace gpuprobe::cupti {
namespace {

TEST_CASE("launches, copies, sets, allocations, syncs and blocking waits are recorded") {
  for (const char* name :
       {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060", "cudaLaunchCooperativeKernel_v9000",
        "cudaGraphLaunch_v10000", "cudaGraphInstantiate_v10000", "cudaMemcpyAsync_v3020",
        "cudaMemcpy_v3020", "cudaMemsetAsync_v3020", "cudaMalloc_v3020", "cudaMallocAsync_v11020",
        "cudaFree_v3020", "cudaFreeHost_v3020", "cudaHostAlloc_v3020",
        "cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020",
        "cudaStreamWaitEvent_v3020", "cudaStreamCreateWithFlags_v5000",
        "cudaStreamDestroy_v5050"}) {
    CAPTURE(name);
    CHECK(is_recorded_api(ApiDomain::kRuntime, name));
  }
  for (const char* name :
       {"cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch", "cuMemcpyHtoDAsync_v2",
        "cuMemsetD32Async", "cuMemAlloc_v2", "cuMemAllocAsync", "cuMemFree_v2", "cuMemCreate",
        "cuMemMap", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
        "cuStreamWaitEvent", "cuModuleLoadData", "cuLibraryLoadData"}) {
    CAPTURE(name);
    CHECK(is_recorded_api(ApiDomain::kDriver, name));
  }
}

TEST_CASE("the queries libraries make around every launch are not") {
  for (const char* name :
       {"cudaGetDevice_v3020", "cudaSetDevice_v3020", "cudaGetLastError_v3020",
        "cudaPeekAtLastError_v3020", "cudaEventCreate_v3020", "cudaEventCreateWithFlags_v3020",
        "cudaEventDestroy_v3020", "cudaEventRecord_v3020", "cudaEventQuery_v3020",
        "cudaStreamQuery_v3020", "cudaStreamIsCapturing_v10000", "cudaGetDeviceCount_v3020",
        "cudaFuncGetAttributes_v3020", "cudaDeviceGetAttribute_v5000",
        "cudaPointerGetAttributes_v4000"}) {
    CAPTURE(name);
    CHECK_FALSE(is_recorded_api(ApiDomain::kRuntime, name));
  }
  for (const char* name :
       {"cuKernelGetName", "cuLibraryGetKernel", "cuCtxGetCurrent", "cuDeviceGetAttribute",
        "cuStreamQuery", "cuStreamGetCaptureInfo_v2", "cuEventRecord", "cuEventQuery",
        "cuPointerGetAttribute", "cuMemGetInfo_v2", "cuMemGetAddressRange_v2", "cuFuncGetAttribute",
        "cuModuleGetFunction"}) {
    CAPTURE(name);
    CHECK_FALSE(is_recorded_api(ApiDomain::kDriver, name));
  }
  // The domain matters: a driver name is not a runtime call.
  CHECK_FALSE(is_recorded_api(ApiDomain::kRuntime, "cuLaunchKernel"));
}

}  // namespace
}  // namespace gpuprobe::cupti
