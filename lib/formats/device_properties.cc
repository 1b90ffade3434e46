#include "formats/device_properties.h"

#include <cstring>

#include "formats/saturate.h"

namespace gpuprobe::formats {
namespace {

#define GPUPROBE_DEVICE_PROPERTY(KEY, FIELD)                                     \
  DeviceProperty {                                                               \
    KEY, [](const DeviceInfo& d) { return static_cast<std::int64_t>(d.FIELD); }, \
        [](DeviceInfo& d, std::int64_t v) {                                      \
          d.FIELD = saturate<decltype(d.FIELD)>(static_cast<double>(v));         \
        }                                                                        \
  }

const DeviceProperty kProperties[] = {
    GPUPROBE_DEVICE_PROPERTY("id", id),
    GPUPROBE_DEVICE_PROPERTY("totalGlobalMem", total_global_mem),
    GPUPROBE_DEVICE_PROPERTY("computeMajor", compute_major),
    GPUPROBE_DEVICE_PROPERTY("computeMinor", compute_minor),
    GPUPROBE_DEVICE_PROPERTY("maxThreadsPerBlock", max_threads_per_block),
    GPUPROBE_DEVICE_PROPERTY("maxThreadsPerMultiprocessor", max_threads_per_multiprocessor),
    GPUPROBE_DEVICE_PROPERTY("regsPerBlock", regs_per_block),
    GPUPROBE_DEVICE_PROPERTY("regsPerMultiprocessor", regs_per_multiprocessor),
    GPUPROBE_DEVICE_PROPERTY("warpSize", warp_size),
    GPUPROBE_DEVICE_PROPERTY("sharedMemPerBlock", shared_mem_per_block),
    GPUPROBE_DEVICE_PROPERTY("sharedMemPerMultiprocessor", shared_mem_per_multiprocessor),
    GPUPROBE_DEVICE_PROPERTY("numSms", num_sms),
    GPUPROBE_DEVICE_PROPERTY("sharedMemPerBlockOptin", shared_mem_per_block_optin),
};

#undef GPUPROBE_DEVICE_PROPERTY

}  // namespace

const DeviceProperty* DevicePropertyTable::begin() const { return kProperties; }
const DeviceProperty* DevicePropertyTable::end() const {
  return kProperties + sizeof kProperties / sizeof kProperties[0];
}
DevicePropertyTable device_properties() { return {}; }

const DeviceProperty* find_device_property(const char* key) {
  for (const DeviceProperty& p : kProperties) {
    if (std::strcmp(p.key, key) == 0) return &p;
  }
  return nullptr;
}

}  // namespace gpuprobe::formats
