// Turns CUPTI activity records into gpuprobe's GpuActivity, on the collector thread: names are
// demangled and interned once, API calls that are noise are dropped (and counted).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "gpu/cupti/api_selection.h"
#include "gpuprobe/gpu_activity.hpp"

namespace gpuprobe::cupti {

class ActivityDecoder {
 public:
  // `callback_name` resolves API function names (cuptiGetCallbackName); when null, API calls are
  // named "runtime API 211" and the like. Unless `all_api`, API calls api_selection.h does not
  // record are dropped here too: where CUPTI cannot be asked for single calls, it records all.
  explicit ActivityDecoder(CallbackNameFn callback_name, bool all_api = false)
      : callback_name_(callback_name), all_api_(all_api) {}

  // Fills `out` from `record`. False for kinds gpuprobe does not record and for filtered API
  // calls (see filtered()).
  bool decode(const CUpti_Activity& record, GpuActivity* out);

  // API calls CUPTI recorded that api_selection.h does not keep (cudaGetDevice, ...): zero
  // where CUPTI records single calls, as gpuprobe asks it to.
  std::uint64_t filtered() const { return filtered_; }
  // GPU work records delivered without timestamps (start 0, or ending before they start).
  std::uint64_t untimed() const { return untimed_; }

  // The interned name of an API function ("cudaLaunchKernel", without CUPTI's version suffix).
  const char* api_name(CUpti_CallbackDomain domain, std::uint32_t cbid);

 private:
  bool decode_fields(const CUpti_Activity& record, GpuActivity* out);
  const char* kernel_name(const char* mangled);

  CallbackNameFn callback_name_;
  bool all_api_;
  std::unordered_map<std::string, const char*> kernel_names_;  // mangled -> interned demangled
  std::string key_;  // reused lookup key, so cache hits do not allocate
  std::unordered_map<std::uint64_t, const char*> api_names_;  // domain << 32 | cbid
  // Synchronization records name a context but no device: learnt from the GPU work records.
  std::unordered_map<std::uint32_t, std::uint32_t> context_devices_;
  std::uint64_t filtered_ = 0;
  std::uint64_t untimed_ = 0;
};

}  // namespace gpuprobe::cupti
