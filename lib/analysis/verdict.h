// What bounds the program, in a sentence: a pure function of the other analyses' results.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/compile.h"
#include "analysis/data_loading.h"
#include "analysis/gpu_idle.h"
#include "analysis/kernel_bounds.h"

namespace gpuprobe::analysis {

// `gpu_kernel_ns`: all kernels' time; `tiny_kernel_ns`: the threshold GpuIdle counted under;
// `compile`: torch.compile's, when the trace has any.
std::string verdict(const GpuIdleResult& gpu, const KernelBoundsResult& bounds,
                    const DataLoadingResult& data, std::int64_t gpu_kernel_ns,
                    std::int64_t tiny_kernel_ns, const CompileResult* compile = nullptr);

}  // namespace gpuprobe::analysis
