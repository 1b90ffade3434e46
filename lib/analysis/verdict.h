// What bounds the program, in a sentence: a pure function of the other analyses' results.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/compile.h"
#include "analysis/data_loading.h"
#include "analysis/gpu_idle.h"
#include "analysis/jitter.h"
#include "analysis/kernel_bounds.h"

namespace gpuprobe::analysis {

// `gpu_kernel_ns`: all kernels' time; `tiny_kernel_ns`: the threshold GpuIdle counted under;
// `compile`: torch.compile's, when the trace has any; `jitter`: the latency outliers, when any.
// In parts joined by "; ": the latency outliers' largest cause (whatever the device), then
// compile-bound (which ends it), or compile warm-up, then what bounds the program's device.
// A mostly idle device (under 50 %) with several streams, whose gaps are mostly not host wait
// (the next kernel was already launched), waits on its other streams: named so, not GPU-bound.
std::string verdict(const GpuIdleResult& gpu, const KernelBoundsResult& bounds,
                    const DataLoadingResult& data, std::int64_t gpu_kernel_ns,
                    std::int64_t tiny_kernel_ns, const CompileResult* compile = nullptr,
                    const JitterResult* jitter = nullptr);

// The verdict's parts, each "" when it has nothing to say. The latency outliers: how many, and
// the cause that explains most of their time above the median; named when --threshold-ms set
// the bar, or when they are stalls (on average at least 3 times the median), not the usual tail.
std::string latency_verdict(const JitterResult& jitter);
// Compile-bound: compiles take at least half the trace and are not a warm-up (below).
std::string compile_bound_verdict(const CompileResult& compile);
// Compile warm-up: compiles take at least half the trace, but are few (under 8 recompiles, no
// recompile-limit hit) and stopped early (at least half the compiled code's runs, or of the time
// outside compiles without runs, came after the last one): start-up cost, not what bounds the
// program.
std::string compile_warmup_verdict(const CompileResult& compile);

}  // namespace gpuprobe::analysis
