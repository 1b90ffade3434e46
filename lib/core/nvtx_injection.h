// gpuprobe as an NVTX tool: the callbacks (nvtx_injection.cc) that InitializeInjectionNvtx2 binds
// (session/cuda_injection.cc: NVTX's loader calls it when NVTX_INJECTION64_PATH names a library
// holding gpuprobe, and it picks the copy of gpuprobe that records), and the flag that keeps
// gpuprobe's own NVTX export (nvtx.cc) from being fed back into it.
#pragma once

#if GPUPROBE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gpuprobe::core {

#if GPUPROBE_HAVE_NVTX
// Binds the calling NVTX module's calls to this copy of gpuprobe. 1 on success, 0 (NVTX then
// makes the module's calls no-ops) when NVTX offers no callbacks or the module is gpuprobe's own
// NVTX export.
int bind_nvtx_tool(NvtxGetExportTableFunc_t get_export_table) noexcept;
#endif

// Set (and defined) by nvtx.cc, on the calling thread, while gpuprobe's own NVTX module binds its
// tool: the injection then declines, so that gpuprobe's ranges exported to NVTX are not recorded
// twice.
void set_binding_own_nvtx(bool binding) noexcept;

// True while the calling thread is inside set_binding_own_nvtx(true) ... (false).
bool binding_own_nvtx() noexcept;

}  // namespace gpuprobe::core
