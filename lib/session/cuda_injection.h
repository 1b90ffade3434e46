// gpuprobe as a CUDA and NVTX injection library. The CUDA driver loads the library that
// CUDA_INJECTION64_PATH names when the program initializes CUDA (cuInit) and calls its
// InitializeInjection(); `gpuprobe run` names libgpuprobe_nvtx.so there, so that CUPTI starts in
// exactly the processes that use CUDA (`cupti_start=cuda`, gpu/deferred_gpu_source.h), before
// their first CUDA call, including programs built without gpuprobe.
//
// A process may hold two copies of gpuprobe: Python's gpuprobe._core, whose session records,
// and libgpuprobe_nvtx.so, which the driver loads beside it. The copy without a session hands
// the call to the other one (gpuprobe_on_cuda_init, which both export). So does NVTX's entry,
// InitializeInjectionNvtx2, which NVTX's loader calls at a module's first NVTX call in the
// library NVTX_INJECTION64_PATH names: the copy without a session binds the module to the copy
// whose session records (core/nvtx_injection.h), so that `gpuprobe run` can name one library
// for Python processes and their native children alike.
#pragma once

#if GPUPROBE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gpuprobe::gpu {
class DeferredGpuSource;
}

namespace gpuprobe::session {

// Stops the GPUPROBE environment's session of this copy (if it has one) at exit before the exit
// handlers registered until now: called where CUPTI started after that session did (at CUDA's
// initialization), for CUPTI registers an exit handler of its own as it starts, and a session
// stopped after it — by the session's static destructor, registered earlier — crashed in
// cuptiActivityDisable (H100, CUDA 13: a program not linked with gpuprobe under `gpuprobe run`).
void stop_environment_session_first_at_exit() noexcept;

// The running session's source to start at CUDA's initialization (nullptr: none). Clearing it
// waits for an activation under way.
void set_cuda_init_target(gpu::DeferredGpuSource* source) noexcept;

// fork()'s child: no session records there; the parent's target is forgotten.
void forget_cuda_init_target_in_child() noexcept;

// Whether another copy of gpuprobe is in this process at all, recording or not: the
// environment's session of a copy loaded later stands down (in a fork()'s child, where the
// parent's copy records nothing, it would otherwise start a session of its own there).
bool another_copy_loaded() noexcept;

// Whether CUDA_INJECTION64_PATH names this very copy: the driver will call its
// InitializeInjection at cuInit (and may be inside cuInit now, where the driver is not asked
// whether CUDA is initialized).
bool cuda_will_inject_this_copy() noexcept;

}  // namespace gpuprobe::session

extern "C" {
// The CUDA driver's entry point (inside cuInit). Always 1: gpuprobe never fails CUDA's start.
__attribute__((visibility("default"))) int InitializeInjection(void) noexcept;
// This copy's part: starts its session's CUPTI. 1 when this copy has a session waiting for
// CUDA, else 0.
__attribute__((visibility("default"))) int gpuprobe_on_cuda_init(void) noexcept;
// 1 while this copy has a session recording or starting (defined in session.cc).
__attribute__((visibility("default"))) int gpuprobe_session_running(void) noexcept;
#if GPUPROBE_HAVE_NVTX
// NVTX's entry point for a tool: binds the calling module's NVTX calls to this copy of gpuprobe,
// or, when it has no session and another copy is loaded, to that one (the one recording, if
// several) through its gpuprobe_bind_nvtx_tool. 1 on success, 0 (NVTX then makes the module's
// calls no-ops) when NVTX offers no callbacks or the module is gpuprobe's own NVTX export.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) noexcept;
// This copy's part, which never hands over (so two copies cannot hand a module to each other).
__attribute__((visibility("default"))) int gpuprobe_bind_nvtx_tool(
    NvtxGetExportTableFunc_t get_export_table) noexcept;
#endif
}
