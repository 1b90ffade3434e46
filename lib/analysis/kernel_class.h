// What likely bounds a kernel with no declared costs, from its name.
#pragma once

#include <string>

namespace gpuprobe::analysis {

// "communication" for collectives (NCCL and RCCL, all-reduce, all-gather, ...; also CPU ranges
// such as "nccl:all_reduce" or "gloo:all_reduce"), "compute" for matrix multiplies, convolutions
// and attention (GEMM, conv, xmma/wgmma, cutlass, flash/fmha, Inductor templates; on ROCm
// rocBLAS/hipBLASLt's Cijk_*, MIOpen's convolutions, composable kernel's XDL/MFMA kernels),
// "memory" for elementwise, reductions, norms, softmax, pooling, copies, gathers and optimizer
// updates (a few FLOPs per byte); "" when the name says neither.
std::string kernel_class_from_name(const std::string& name);

}  // namespace gpuprobe::analysis
