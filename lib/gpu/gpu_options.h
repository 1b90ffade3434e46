// The GPU sources' options: which GPU activity CUPTI records (`cupti=`), how, in how much memory,
// how long GPU work waits for its range, and bursts (`gpu_burst=`). Declared here, beside the
// code that reads them (start_gpu_source.h); the session layer puts the table together with the
// other layers'.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/option_table.h"

namespace gpuprobe::gpu {

// What `cupti=`, `cupti_api=`, `cupti_start=`, `cupti_buffers=`, `cupti_buffer_kb=`, `cupti_mb=`,
// `attribution_ms=` and `gpu_burst=` choose; every default is written here once.
struct GpuOptions {
  std::uint32_t kinds = 0;    // core::gpu_kind_bit()s; 0: no GPU activity
  bool all_api = false;       // every API call, not only those api_selection.h keeps
  bool api_callbacks = true;  // the kept calls from CUPTI callbacks, not API activity records
  std::size_t buffers = 8;    // CUPTI activity buffers allocated at the start
  std::size_t buffer_kb = 4096;
  std::size_t max_mb = 256;  // all CUPTI activity buffers together
  std::uint32_t attribution_ms = 5000;
  // gpu_burst=ON/EVERY: GPU activity for ON in every EVERY; 0: all the time.
  std::int64_t burst_on_ns = 0;
  std::int64_t burst_every_ns = 0;
  // cupti_start=cuda: CUPTI starts when the program initializes CUDA (the driver calls
  // InitializeInjection, session/cuda_injection.cc), not when the session starts.
  bool start_at_cuda_init = false;
};

// cupti= ... gpu_burst=, with their check (bursts need cupti=).
const base::OptionTable<GpuOptions>& gpu_options();

}  // namespace gpuprobe::gpu
