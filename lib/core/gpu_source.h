// Where GPU activity comes from, as the collector sees it. The CUPTI backend (lib/cupti/)
// implements it; builds without CUPTI headers get a start function that explains why not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "gpuprobe/gpu_activity.hpp"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::core {

// Bit masks over GpuActivityKind, for the `cupti=` key.
constexpr std::uint32_t gpu_kind_bit(GpuActivityKind kind) {
  return 1u << static_cast<unsigned>(kind);
}
inline constexpr std::uint32_t kAllGpuKinds = 0x7Fu;

struct GpuOptions {
  std::uint32_t kinds = 0;       // gpu_kind_bit()s
  std::size_t buffer_count = 8;  // allocated at start
  std::size_t buffer_bytes = 4 << 20;
  std::size_t max_bytes = std::size_t{256} << 20;  // the pool grows on demand up to this
  ClockSource clock = ClockSource::kMonotonic;
};

struct GpuSourceStats {
  std::uint64_t dropped = 0;            // records CUPTI reports it dropped
  std::uint64_t buffers_exhausted = 0;  // CUPTI buffer requests the pool could not serve
  std::uint64_t filtered = 0;           // API calls dropped as noise
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // Collector: appends every record CUPTI has delivered. `final` forces out incomplete buffers.
  virtual void collect(bool final, std::vector<GpuActivity>* out) = 0;
  // Stops producing records (before the collector's last drain).
  virtual void disable() = 0;
  // Releases CUPTI after the last drain, so that CUDA calls cost what they did before.
  virtual void finalize() = 0;
  virtual GpuSourceStats stats() const = 0;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
};

// Starts recording the kinds in `options`, or returns nullptr and says why in `why` (the text
// after "CUPTI unavailable: ").
std::unique_ptr<GpuSource> start_gpu_source(const GpuOptions& options, std::string* why);

}  // namespace gpuprobe::core
