#include "gpu/cupti/api_selection.h"

namespace gpuprobe::cupti {
namespace {

// Prefixes of the recorded calls' names. The README's list of recorded calls says the same.
constexpr std::string_view kRuntime[] = {
    "cudaLaunch",             // cudaLaunchKernel(ExC), cudaLaunchCooperativeKernel, HostFunc
    "cudaGraphLaunch",        //
    "cudaGraphInstantiate",   //
    "cudaMemcpy",             // every copy, sync and async
    "cudaMemset",             //
    "cudaMalloc",             // cudaMalloc, Host, Managed, Async, FromPoolAsync, Pitch, Array
    "cudaHostAlloc",          //
    "cudaFree",               // cudaFree, Host, Async, Array
    "cudaDeviceSynchronize",  //
    "cudaStreamSynchronize",  //
    "cudaEventSynchronize",   //
    "cudaStreamWaitEvent",    // a wait that blocks the stream
    "cudaStreamCreate",       // rare, and a cost worth seeing when it is not
    "cudaStreamDestroy",      //
};
constexpr std::string_view kDriver[] = {
    "cuLaunch",             // cuLaunchKernel(Ex), cooperative, host functions: Triton, cuBLASLt
    "cuGraphLaunch",        //
    "cuGraphInstantiate",   //
    "cuMemcpy",             //
    "cuMemset",             //
    "cuMemAlloc",           //
    "cuMemFree",            //
    "cuMemHostAlloc",       //
    "cuMemCreate",          // cuMemCreate, Map, Unmap, Release: PyTorch's expandable segments
    "cuMemMap",             //
    "cuMemUnmap",           //
    "cuMemRelease",         //
    "cuCtxSynchronize",     //
    "cuStreamSynchronize",  //
    "cuEventSynchronize",   //
    "cuStreamWaitEvent",    //
    "cuStreamCreate",       //
    "cuStreamDestroy",      //
    "cuModuleLoad",         // code loads: a compile's kernels arriving
    "cuLibraryLoad",        //
};

}  // namespace

bool is_recorded_api(ApiDomain domain, std::string_view name) {
  const auto starts_any = [name](const auto& prefixes) {
    for (std::string_view prefix : prefixes) {
      if (name.substr(0, prefix.size()) == prefix) return true;
    }
    return false;
  };
  return domain == ApiDomain::kRuntime ? starts_any(kRuntime) : starts_any(kDriver);
}

}  // namespace gpuprobe::cupti
