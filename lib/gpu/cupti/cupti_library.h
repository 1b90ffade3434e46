// libcupti and the CUDA driver, opened with dlopen when a session asks for GPU activity, so a
// program built with CUDA support runs on machines without a driver, a GPU or CUPTI.
#pragma once

#include <cupti.h>

#include <mutex>
#include <string>
#include <vector>

#include "gpuprobe/sink.hpp"
#include "gpuprobe/status.hpp"

namespace gpuprobe::cupti {

// The CUPTI functions gpuprobe calls, resolved from the loaded library.
struct CuptiApi {
  CUptiResult (*activity_enable)(CUpti_ActivityKind);
  CUptiResult (*activity_disable)(CUpti_ActivityKind);
  CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*activity_register_timestamp_callback)(CUpti_TimestampCallbackFunc);
  CUptiResult (*activity_flush_all)(uint32_t);
  CUptiResult (*activity_get_next_record)(uint8_t*, size_t, CUpti_Activity**);
  CUptiResult (*activity_get_num_dropped_records)(CUcontext, uint32_t, size_t*);
  CUptiResult (*activity_enable_runtime_api)(CUpti_CallbackId, uint8_t);
  CUptiResult (*activity_enable_driver_api)(CUpti_CallbackId, uint8_t);
  CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t, const char**);
  CUptiResult (*get_result_string)(CUptiResult, const char**);
  CUptiResult (*finalize)();
  CUptiResult (*subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                 CUpti_CallbackId);
  CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
};

class CuptiLibrary {
 public:
  CuptiLibrary() = default;
  // For tests: a library made of the given functions, with no device.
  explicit CuptiLibrary(const CuptiApi& api) : api_(api) {
    std::call_once(devices_once_, [] {});
  }

  // Opens the libraries once per process and checks that a CUDA device is there. On failure the
  // status says why, for a "CUPTI unavailable: <why>" line; later calls return the same.
  // `inside_cuda_init`: called from the driver's own initialization (CUDA's injection entry
  // point), where the driver is not asked anything: the devices are queried at the first
  // devices() call instead, and the device check is CUDA's own.
  static Status get(const CuptiLibrary** out, bool inside_cuda_init = false);

  // For tests: the same steps with an explicit library path (empty: the usual search).
  static Status open(const std::string& cupti_path, CuptiLibrary* out,
                     bool inside_cuda_init = false);

  const CuptiApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  // Names a CUPTI result code ("CUPTI_ERROR_NOT_INITIALIZED").
  std::string describe(CUptiResult result) const;
  // The devices the driver reports, for deviceProperties (queried here the first time where
  // open() ran inside CUDA's initialization).
  const std::vector<DeviceInfo>& devices() const;

 private:
  CuptiApi api_{};
  std::string path_;
  mutable std::once_flag devices_once_;
  mutable std::vector<DeviceInfo> devices_;
};

}  // namespace gpuprobe::cupti
