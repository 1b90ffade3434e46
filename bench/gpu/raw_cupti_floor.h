// The floor for CUPTI tracing cost: a minimal consumer that enables the same activity kinds as
// gpuprobe, hands CUPTI buffers (preallocated, or malloc'd per request as CUPTI's samples do)
// and only counts kernel records, in CUPTI's own callback. Whatever gpuprobe adds over a launch
// beyond the cheaper of the two is gpuprobe's doing.
#pragma once

#include <cstdint>

namespace raw_cupti {

struct Options {
  bool runtime = false;         // also RUNTIME records
  bool tsc_timestamps = false;  // stamp records with rdtsc through the timestamp callback
  int flush_ms = 0;             // > 0: a thread calls cuptiActivityFlushAll(0) this often
  bool malloc_buffers = false;  // a new buffer per request, freed when CUPTI hands it back
  bool driver = false;          // also DRIVER records (Triton and cuBLASLt launch through it)
};

// Enables CONCURRENT_KERNEL (and more, per `options`). Returns false on a CUPTI error.
bool start(const Options& options);
// Flushes, disables and finalizes; returns the kernel records seen since start().
std::uint64_t stop();

}  // namespace raw_cupti
