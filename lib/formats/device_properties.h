// A CUDA device's properties as traces carry them: Kineto's `deviceProperties` keys, one table
// for the Chrome writer and reader (a "deviceProperties" array) and the Perfetto writer and
// reader (one "gpuprobe device" instant per device, its properties as annotations).
#pragma once

#include <cstdint>

#include "gpuprobe/trace_model.hpp"

namespace gpuprobe::formats {

// The name of the Perfetto instant that describes one device.
inline constexpr char kDeviceEventName[] = "gpuprobe device";

// An integer property: Kineto's key, and how to read and store it ("name" is text, apart).
struct DeviceProperty {
  const char* key;
  std::int64_t (*get)(const DeviceInfo& d);
  void (*set)(DeviceInfo& d, std::int64_t v);
};

// Every integer property, in the order writers write them ("id" first).
struct DevicePropertyTable {
  const DeviceProperty* begin() const;
  const DeviceProperty* end() const;
};
DevicePropertyTable device_properties();

// The property called `key`, or nullptr.
const DeviceProperty* find_device_property(const char* key);

}  // namespace gpuprobe::formats
