// The NVTX3 export of gpuprobe's ranges: with no NVTX tool attached each call is a load of a
// null function pointer; under Nsight Systems the ranges appear in the domain "gpuprobe" with
// the call site's name and color.
#include "core/nvtx_injection.h"
#include "gpuprobe/detail/gate.hpp"

#if GPUPROBE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace gpuprobe::core {
namespace {
thread_local bool t_binding_own = false;
}  // namespace

// Here rather than beside the injection, so that a program linking the static library does not
// pull InitializeInjectionNvtx2 in with gpuprobe's NVTX export.
void set_binding_own_nvtx(bool binding) noexcept { t_binding_own = binding; }
bool binding_own_nvtx() noexcept { return t_binding_own; }
}  // namespace gpuprobe::core

namespace gpuprobe::detail {

#if GPUPROBE_HAVE_NVTX
namespace {

// The first call binds this module's NVTX tool; gpuprobe's own injection (when
// NVTX_INJECTION64_PATH names a library holding gpuprobe) declines it, so that gpuprobe's
// exported ranges are not recorded a second time as NVTX ranges.
nvtxDomainHandle_t create_domain() noexcept {
  core::set_binding_own_nvtx(true);
  const nvtxDomainHandle_t handle = nvtxDomainCreateA("gpuprobe");
  core::set_binding_own_nvtx(false);
  return handle;
}

nvtxDomainHandle_t domain() noexcept {
  static const nvtxDomainHandle_t handle = create_domain();
  return handle;
}

nvtxEventAttributes_t attributes(const CallSite& site) noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = static_cast<std::uint32_t>(site.category);
  a.colorType = NVTX_COLOR_ARGB;
  a.color = site.color;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = site.name;
  return a;
}

}  // namespace

void nvtx_push(const CallSite& site) noexcept {
  const nvtxEventAttributes_t a = attributes(site);
  nvtxDomainRangePushEx(domain(), &a);
}

void nvtx_pop() noexcept { nvtxDomainRangePop(domain()); }

// Creating the domain is NVTX's first call from this module, which loads the tool if there is
// one; without a tool the creation returns a null handle.
bool nvtx_tool_attached() noexcept { return domain() != nullptr; }

void nvtx_mark(const CallSite& site) noexcept {
  const nvtxEventAttributes_t a = attributes(site);
  nvtxDomainMarkEx(domain(), &a);
}

#else

void nvtx_push(const CallSite&) noexcept {}
void nvtx_pop() noexcept {}
void nvtx_mark(const CallSite&) noexcept {}
bool nvtx_tool_attached() noexcept { return false; }

#endif

}  // namespace gpuprobe::detail
