// Which CUDA API calls a session records: the ones a trace's reader uses — launches (kernels,
// graphs, host functions), copies and sets, allocations and frees, synchronizations and the waits
// that block, graph instantiation and module loads — and not the many queries CUDA libraries
// make around every launch (cudaGetDevice, cudaGetLastError, stream and event queries, the
// driver calls the runtime makes for itself). The others are switched off in CUPTI one callback
// id at a time, so they are never recorded; `cupti=...+all_api` records every call.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string_view>

namespace gpuprobe::cupti {

enum class ApiDomain { kRuntime, kDriver };

// `name`: CUPTI's callback name, with or without its version suffix ("cudaLaunchKernel_v7000").
bool is_recorded_api(ApiDomain domain, std::string_view name);

using CallbackNameFn = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);

// Calls fn(domain, cbid, name, recorded) for every callback id of the runtime (or driver) domain
// that `callback_name` (cuptiGetCallbackName) names; `recorded` is is_recorded_api's answer. A
// false from `fn` ends the walk, and the walk then returns false.
template <class Fn>
bool for_each_api(CallbackNameFn callback_name, bool runtime, Fn&& fn) {
  const CUpti_CallbackDomain domain =
      runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const std::uint32_t ids = runtime ? std::uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE}
                                    : std::uint32_t{CUPTI_DRIVER_TRACE_CBID_SIZE};
  for (std::uint32_t cbid = 1; cbid < ids; ++cbid) {
    const char* name = nullptr;
    if (callback_name(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const bool recorded = is_recorded_api(runtime ? ApiDomain::kRuntime : ApiDomain::kDriver, name);
    if (!fn(domain, cbid, name, recorded)) return false;
  }
  return true;
}

}  // namespace gpuprobe::cupti
