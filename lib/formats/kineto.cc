#include "formats/kineto.h"

#include <iterator>

namespace gpuprobe::formats {
namespace {

using K = GpuActivityKind;

constexpr KinetoCategory gpu(const char* name, GpuActivityKind kind) {
  return {name, true, kind, Category::kCuda};
}
constexpr KinetoCategory cpu(const char* name, Category category) {
  return {name, false, GpuActivityKind::kKernel, category};
}

// Facts from pytorch/kineto's libkineto (ActivityType.h's names, output_json.cpp's history) and
// its ROCm, XPU and MTIA back ends; the names gpuprobe writes first for each kind.
constexpr KinetoCategory kCategories[] = {
    gpu("kernel", K::kKernel), gpu("gpu_memcpy", K::kMemcpy), gpu("gpu_memset", K::kMemset),
    gpu("cuda_runtime", K::kRuntimeApi),  // also ROCm's HIP runtime calls (roctracer, rocprofiler)
    gpu("cuda_driver", K::kDriverApi), gpu("cuda_sync", K::kSync), gpu("overhead", K::kOverhead),
    // Kineto from its start (2020-09) to 2022-04 (PyTorch 1.8 to 1.11) capitalised them.
    gpu("Kernel", K::kKernel), gpu("Memcpy", K::kMemcpy), gpu("Memset", K::kMemset),
    gpu("Runtime", K::kRuntimeApi),
    // Other accelerators: MTIA's on-device command processor events are its device work; its,
    // Intel XPU's and PrivateUse1 back ends' runtime and driver calls are API calls.
    gpu("mtia_ccp_events", K::kKernel), gpu("mtia_runtime", K::kRuntimeApi),
    gpu("xpu_runtime", K::kRuntimeApi), gpu("xpu_driver", K::kDriverApi),
    gpu("privateuse1_runtime", K::kRuntimeApi), gpu("privateuse1_driver", K::kDriverApi),
    // CPU ranges. "gpu_user_annotation" (and PyTorch 1.8-1.9's "User", on a "stream N user"
    // thread) is Kineto's copy of an annotation on the GPU timeline: the span of the GPU work
    // launched in it, never a second step.
    cpu("", Category::kApp), cpu("user_annotation", Category::kApp),
    cpu("cpu_instant_event", Category::kApp), cpu("cpu_op", Category::kTorch),
    cpu("operator", Category::kTorch), cpu("Operator", Category::kTorch),  // PyTorch 1.8-1.9
    cpu("python_function", Category::kPython), cpu("gpu_user_annotation", Category::kCuda),
    cpu("User", Category::kCuda),  // PyTorch 1.8-1.9
};

struct ApiPrefix {
  std::string_view prefix;
  ApiRole role;
};

// By name prefix; the first match decides (longer prefixes before shorter ones they begin with).
constexpr ApiPrefix kApiPrefixes[] = {
    // CUDA runtime and driver.
    {"cudaLaunch", ApiRole::kLaunch},  // cudaLaunchKernel(ExC), cooperative, host functions
    {"cuLaunch", ApiRole::kLaunch},
    {"cudaGraphLaunch", ApiRole::kLaunch},
    {"cuGraphLaunch", ApiRole::kLaunch},
    {"cudaMemcpy", ApiRole::kCopy},
    {"cuMemcpy", ApiRole::kCopy},
    {"cudaMemset", ApiRole::kSet},
    {"cuMemset", ApiRole::kSet},
    {"cudaStreamSynchronize", ApiRole::kSync},
    {"cudaDeviceSynchronize", ApiRole::kSync},
    {"cudaEventSynchronize", ApiRole::kSync},
    {"cuStreamSynchronize", ApiRole::kSync},
    {"cuCtxSynchronize", ApiRole::kSync},
    {"cuEventSynchronize", ApiRole::kSync},
    {"cudaStreamWaitEvent", ApiRole::kStreamWait},
    {"cuStreamWaitEvent", ApiRole::kStreamWait},
    // HIP (ROCm): the calls Kineto's roctracer and rocprofiler back ends link to GPU work.
    {"hipLaunch", ApiRole::kLaunch},  // hipLaunchKernel, hipLaunchCooperativeKernel, ...
    {"hipExtLaunch", ApiRole::kLaunch},
    {"hipModuleLaunch", ApiRole::kLaunch},
    {"hipExtModuleLaunch", ApiRole::kLaunch},
    {"hipHccModuleLaunch", ApiRole::kLaunch},
    {"hipGraphLaunch", ApiRole::kLaunch},
    {"hipMemcpy", ApiRole::kCopy},  // hipMemcpyAsync, hipMemcpyWithStream, hipMemcpyDtoH, ...
    {"hipMemset", ApiRole::kSet},
    {"hipStreamSynchronize", ApiRole::kSync},
    {"hipDeviceSynchronize", ApiRole::kSync},
    {"hipEventSynchronize", ApiRole::kSync},
    {"hipCtxSynchronize", ApiRole::kSync},
    {"hipStreamWaitEvent", ApiRole::kStreamWait},
    // MTIA: a job's submission is its kernel launch (HTA's launch name for MTIA, too).
    {"runFunction - job_prep_and_submit_for_execution", ApiRole::kLaunch},
    // Intel XPU: the SYCL (pi) and unified runtime (ur) calls Kineto's XPUPTI back end linked.
    {"piEnqueueKernelLaunch", ApiRole::kLaunch},
    {"urEnqueueKernelLaunch", ApiRole::kLaunch},
    {"urEnqueueCooperativeKernelLaunch", ApiRole::kLaunch},
    {"urEnqueueUSMMemcpy", ApiRole::kCopy},
    {"urEnqueueUSMFill", ApiRole::kSet},
};

}  // namespace

const KinetoCategory* KinetoCategoryTable::begin() const { return kCategories; }
const KinetoCategory* KinetoCategoryTable::end() const { return std::end(kCategories); }
KinetoCategoryTable kineto_categories() { return {}; }

const KinetoCategory* find_kineto_category(std::string_view category) {
  for (const KinetoCategory& c : kCategories) {
    if (category == c.name) return &c;
  }
  return nullptr;
}

const char* chrome_gpu_category(GpuActivityKind kind) {
  for (const KinetoCategory& c : kCategories) {
    if (c.gpu && c.kind == kind) return c.name;
  }
  return "gpu";
}

bool gpu_kind_of_category(std::string_view category, GpuActivityKind* kind) {
  const KinetoCategory* c = find_kineto_category(category);
  if (c == nullptr || !c->gpu) return false;
  *kind = c->kind;
  return true;
}

ApiRole api_role(std::string_view api_name) {
  for (const ApiPrefix& p : kApiPrefixes) {
    if (api_name.substr(0, p.prefix.size()) == p.prefix) return p.role;
  }
  return ApiRole::kOther;
}

const char* sync_kind_name(SyncKind kind) {
  switch (kind) {
    case SyncKind::kEventSynchronize:
      return "Event Sync";
    case SyncKind::kStreamWaitEvent:
      return "Stream Wait Event";
    case SyncKind::kStreamSynchronize:
      return "Stream Sync";
    case SyncKind::kContextSynchronize:
      return "Context Sync";
    case SyncKind::kUnknown:
      break;
  }
  return "Unknown Sync";
}

SyncKind sync_kind_from_name(std::string_view name) {
  for (int k = 1; k <= static_cast<int>(SyncKind::kContextSynchronize); ++k) {
    if (name == sync_kind_name(static_cast<SyncKind>(k))) return static_cast<SyncKind>(k);
  }
  return SyncKind::kUnknown;
}

}  // namespace gpuprobe::formats
