// Which CUDA API calls a session records: the ones a trace's reader uses — launches (kernels,
// graphs, host functions), copies and sets, allocations and frees, synchronizations and the waits
// that block, graph instantiation and module loads — and not the many queries CUDA libraries
// make around every launch (cudaGetDevice, cudaGetLastError, stream and event queries, the
// driver calls the runtime makes for itself). The others are switched off in CUPTI one callback
// id at a time, so they are never recorded; `cupti=...+all_api` records every call.
#pragma once

#include <string_view>

namespace gpuprobe::cupti {

enum class ApiDomain { kRuntime, kDriver };

// `name`: CUPTI's callback name, with or without its version suffix ("cudaLaunchKernel_v7000").
bool is_recorded_api(ApiDomain domain, std::string_view name);

}  // namespace gpuprobe::cupti
