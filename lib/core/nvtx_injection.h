// gpuprobe as an NVTX tool: InitializeInjectionNvtx2 (nvtx_injection.cc), which NVTX's loader
// calls when NVTX_INJECTION64_PATH names a library holding gpuprobe, and the flag that keeps
// gpuprobe's own NVTX export (nvtx.cc) from being fed back into it.
#pragma once

namespace gpuprobe::core {

// Set (and defined) by nvtx.cc, on the calling thread, while gpuprobe's own NVTX module binds its
// tool: the injection then declines, so that gpuprobe's ranges exported to NVTX are not recorded
// twice.
void set_binding_own_nvtx(bool binding) noexcept;

// True while the calling thread is inside set_binding_own_nvtx(true) ... (false).
bool binding_own_nvtx() noexcept;

}  // namespace gpuprobe::core
