#include "analysis/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace gpuprobe::analysis {

std::string kernel_class_from_name(const std::string& name) {
  std::string lower(name.size(), ' ');
  std::transform(name.begin(), name.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto any = [&](std::initializer_list<const char*> parts) {
    for (const char* p : parts) {
      if (lower.find(p) != std::string::npos) return true;
    }
    return false;
  };
  if (any({"nccl", "rccl", "gloo:", "allreduce", "all_reduce", "allgather", "all_gather",
           "reducescatter", "reduce_scatter", "alltoall", "all_to_all", "sendrecv"}))
    return "communication";
  // Matrix-vector products stream their matrix once: memory-bound, though named like GEMMs;
  // type conversions are named like convolutions.
  if (any({"gemv", "convert"})) return "memory";
  // ROCm's too: rocBLAS/Tensile and hipBLASLt GEMMs are "Cijk_..." (C[i,j] over k), MIOpen's
  // convolutions "MIOpenCv...", "naive_conv_...", composable kernel's "..._xdl_..." (XDLOPS,
  // AMD's matrix instructions, "mfma"/"wmma").
  if (any({"gemm",  "xmma",     "wgmma",     "hgmma",  "cutlass",    "cublas", "conv",
           "flash", "fmha",     "attention", "sdpa",   "triton_tem", "matmul", "_mma",
           "cijk_", "miopencv", "_xdl",      "xdlops", "mfma",       "wmma"}))
    return "compute";
  if (any({"elementwise", "vectorized", "reduce",  "reduction", "triton_poi", "triton_red",
           "triton_per",  "copy",       "memcpy",  "fill",      "cat_",       "catarray",
           "index",       "gather",     "scatter", "softmax",   "norm",       "transpose",
           "embedding",   "adam",       "sgd",     "foreach",   "dropout",    "where",
           "sum",         "mean",       "cast",    "pool"}))
    return "memory";
  return "";
}

}  // namespace gpuprobe::analysis
