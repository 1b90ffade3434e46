// The raw CUPTI floor (raw_cupti_floor.h) as a C library, for Python benchmarks to load with
// ctypes (bench/gpu/torch_serving_bench.py): the least a CUPTI consumer costs on a real workload.
#include "raw_cupti_floor.h"

extern "C" {

// kinds: bit 0 runtime, bit 1 driver. Returns 1 when CUPTI started.
int raw_cupti_start(int kinds) {
  raw_cupti::Options options;
  options.runtime = (kinds & 1) != 0;
  options.driver = (kinds & 2) != 0;
  return raw_cupti::start(options) ? 1 : 0;
}

// Kernel records seen since raw_cupti_start.
unsigned long long raw_cupti_stop() { return raw_cupti::stop(); }
}
