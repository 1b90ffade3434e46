#include "gpu/cupti/cupti_library.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "base/dynamic_symbol.h"

namespace gpuprobe::cupti {
namespace {

// dlerror() for the last failure, or a fallback.
std::string last_dl_error() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

// Where libcupti is looked for when GPUPROBE_CUPTI_LIB does not say: the loader's own search
// path first (LD_LIBRARY_PATH, ldconfig), then the CUDA toolkit's usual places.
std::vector<std::string> candidate_paths() {
  std::vector<std::string> out = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
  std::vector<std::string> roots;
  if (const char* home = std::getenv("CUDA_HOME")) roots.emplace_back(home);
  if (const char* path = std::getenv("CUDA_PATH")) roots.emplace_back(path);
  roots.emplace_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    for (const char* sub :
         {"/extras/CUPTI/lib64/libcupti.so", "/lib64/libcupti.so", "/lib/libcupti.so",
          "/targets/x86_64-linux/lib/libcupti.so", "/targets/sbsa-linux/lib/libcupti.so"}) {
      out.push_back(root + sub);
    }
  }
  return out;
}

Status load_cupti(const std::string& explicit_path, void** handle, std::string* path) {
  if (!explicit_path.empty()) {
    *handle = dlopen(explicit_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (*handle == nullptr)
      return Status::Error("cannot load " + explicit_path + ": " + last_dl_error());
    *path = explicit_path;
    return {};
  }
  // A libcupti the process has loaded already is the one to use: torch's libtorch_cuda.so links
  // its own (libcupti.so.13 from the nvidia-cuda-cupti wheel), and a second copy from the
  // toolkit would be a second CUPTI in the process, each with its own state toward the driver —
  // the suspected reason torch.profiler found CUPTI taken after a gpuprobe session stopped.
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (*handle != nullptr) {
      *path = std::string(soname) + " (already loaded in this process)";
      return {};
    }
  }
  std::string first_error;
  for (const std::string& candidate : candidate_paths()) {
    *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (*handle != nullptr) {
      *path = candidate;
      return {};
    }
    if (first_error.empty()) first_error = last_dl_error();
  }
  return Status::Error("libcupti not found (" + first_error +
                       "; set GPUPROBE_CUPTI_LIB to its path)");
}

Status resolve_cupti(void* handle, const std::string& path, CuptiApi* api) {
  std::string missing;
  base::resolve_symbol(handle, "cuptiActivityEnable", &api->activity_enable, &missing);
  base::resolve_symbol(handle, "cuptiActivityDisable", &api->activity_disable, &missing);
  base::resolve_symbol(handle, "cuptiActivityRegisterCallbacks", &api->activity_register_callbacks,
                       &missing);
  base::resolve_symbol(handle, "cuptiActivityRegisterTimestampCallback",
                       &api->activity_register_timestamp_callback, &missing);
  base::resolve_symbol(handle, "cuptiActivityFlushAll", &api->activity_flush_all, &missing);
  base::resolve_symbol(handle, "cuptiActivityGetNextRecord", &api->activity_get_next_record,
                       &missing);
  base::resolve_symbol(handle, "cuptiActivityGetNumDroppedRecords",
                       &api->activity_get_num_dropped_records, &missing);
  base::resolve_symbol(handle, "cuptiActivityEnableRuntimeApi", &api->activity_enable_runtime_api,
                       &missing);
  base::resolve_symbol(handle, "cuptiActivityEnableDriverApi", &api->activity_enable_driver_api,
                       &missing);
  base::resolve_symbol(handle, "cuptiGetCallbackName", &api->get_callback_name, &missing);
  base::resolve_symbol(handle, "cuptiGetResultString", &api->get_result_string, &missing);
  base::resolve_symbol(handle, "cuptiFinalize", &api->finalize, &missing);
  base::resolve_symbol(handle, "cuptiSubscribe", &api->subscribe, &missing);
  base::resolve_symbol(handle, "cuptiUnsubscribe", &api->unsubscribe, &missing);
  base::resolve_symbol(handle, "cuptiEnableCallback", &api->enable_callback, &missing);
  base::resolve_symbol(handle, "cuptiEnableDomain", &api->enable_domain, &missing);
  if (!missing.empty()) {
    return Status::Error(path + " is not a usable libcupti (no symbol " + missing +
                         "; CUDA 12.5 or newer is needed)");
  }
  return {};
}

// The CUDA driver, for the device check and deviceProperties. CUPTI itself loads the driver
// too; opening it here first turns "no driver" and "no device" into clear messages.
struct DriverApi {
  CUresult (*init)(unsigned int);
  CUresult (*device_get_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_get_name)(char*, int, CUdevice);
  CUresult (*device_total_mem)(size_t*, CUdevice);
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice);
};

Status load_devices(std::vector<DeviceInfo>* devices) {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Status::Error("no CUDA driver (" + last_dl_error() + ")");
  DriverApi d{};
  std::string missing;
  base::resolve_symbol(handle, "cuInit", &d.init, &missing);
  base::resolve_symbol(handle, "cuDeviceGetCount", &d.device_get_count, &missing);
  base::resolve_symbol(handle, "cuDeviceGet", &d.device_get, &missing);
  base::resolve_symbol(handle, "cuDeviceGetName", &d.device_get_name, &missing);
  base::resolve_symbol(handle, "cuDeviceTotalMem_v2", &d.device_total_mem, &missing);
  base::resolve_symbol(handle, "cuDeviceGetAttribute", &d.device_get_attribute, &missing);
  if (!missing.empty()) return Status::Error("the CUDA driver lacks " + missing);
  if (const CUresult r = d.init(0); r != CUDA_SUCCESS) {
    return Status::Error(r == CUDA_ERROR_NO_DEVICE
                             ? "no CUDA device"
                             : "cuInit failed with CUDA error " + std::to_string(r));
  }
  int count = 0;
  if (d.device_get_count(&count) != CUDA_SUCCESS || count == 0)
    return Status::Error("no CUDA device");
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (d.device_get(&dev, i) != CUDA_SUCCESS) continue;
    DeviceInfo info;
    info.id = i;
    char name[256] = {};
    if (d.device_get_name(name, sizeof name, dev) == CUDA_SUCCESS) info.name = name;
    size_t mem = 0;
    if (d.device_total_mem(&mem, dev) == CUDA_SUCCESS) info.total_global_mem = mem;
    const auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      return d.device_get_attribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
    };
    info.compute_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    info.compute_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    info.max_threads_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    info.regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    info.regs_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    info.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    info.shared_mem_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    info.shared_mem_per_multiprocessor =
        attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    info.num_sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info.shared_mem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    devices->push_back(std::move(info));
  }
  return {};
}

}  // namespace

Status CuptiLibrary::open(const std::string& cupti_path, CuptiLibrary* out, bool inside_cuda_init) {
  void* handle = nullptr;
  if (Status s = load_cupti(cupti_path, &handle, &out->path_); !s.ok()) return s;
  if (Status s = resolve_cupti(handle, out->path_, &out->api_); !s.ok()) {
    dlclose(handle);
    return s;
  }
  if (inside_cuda_init) return {};  // cuInit is running: its device check is the one
  Status status;
  std::call_once(out->devices_once_, [&] { status = load_devices(&out->devices_); });
  return status;
}

const std::vector<DeviceInfo>& CuptiLibrary::devices() const {
  std::call_once(devices_once_, [this] { static_cast<void>(load_devices(&devices_)); });
  return devices_;
}

Status CuptiLibrary::get(const CuptiLibrary** out, bool inside_cuda_init) {
  // Opened once and never closed: CUPTI cannot be unloaded from a process that used it.
  static CuptiLibrary* library = nullptr;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [inside_cuda_init] {
    auto* lib = new CuptiLibrary;
    const char* env = std::getenv("GPUPROBE_CUPTI_LIB");
    status = open(env != nullptr ? env : "", lib, inside_cuda_init);
    if (status.ok()) {
      library = lib;
    } else {
      delete lib;
    }
  });
  *out = library;
  return status;
}

std::string CuptiLibrary::describe(CUptiResult result) const {
  const char* text = nullptr;
  if (api_.get_result_string != nullptr && api_.get_result_string(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace gpuprobe::cupti
