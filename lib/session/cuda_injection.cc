#include "session/cuda_injection.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/notice.h"
#include "gpu/deferred_gpu_source.h"

namespace gpuprobe::session {
namespace {

std::atomic<gpu::DeferredGpuSource*> g_target{nullptr};
std::atomic<int> g_activating{0};  // activations under way (a spin count: fork-safe)

// The loaded objects other than this copy that export gpuprobe_on_cuda_init. Names first:
// dlopen is not called while dl_iterate_phdr holds the loader's list.
std::vector<std::string> loaded_object_names() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// Calls another copy's entry point in the object `handle` names, if it has one.
int call_other_copy(void* handle) {
  using Entry = int (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "gpuprobe_on_cuda_init"));
  return entry != nullptr && entry != &gpuprobe_on_cuda_init ? entry() : 0;
}

// The program itself (linked with gpuprobe, which exports the entry point from executables:
// CMakeLists.txt), then every shared object loaded (Python's gpuprobe._core).
int hand_to_another_copy() {
  if (void* program = dlopen(nullptr, RTLD_LAZY); program != nullptr) {
    const int taken = call_other_copy(program);
    dlclose(program);
    if (taken != 0) return taken;
  }
  for (const std::string& name : loaded_object_names()) {
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_LOCAL);
    if (handle == nullptr) continue;
    const int taken = call_other_copy(handle);
    dlclose(handle);
    if (taken != 0) return taken;
  }
  return 0;
}

}  // namespace

void set_cuda_init_target(gpu::DeferredGpuSource* source) noexcept {
  g_target.store(source, std::memory_order_seq_cst);
  if (source == nullptr) {
    while (g_activating.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }
}

void forget_cuda_init_target_in_child() noexcept {
  g_target.store(nullptr, std::memory_order_relaxed);
  g_activating.store(0, std::memory_order_relaxed);
}

}  // namespace gpuprobe::session

extern "C" int gpuprobe_on_cuda_init(void) {
  using namespace gpuprobe::session;
  g_activating.fetch_add(1, std::memory_order_seq_cst);
  gpuprobe::gpu::DeferredGpuSource* target = g_target.load(std::memory_order_seq_cst);
  int taken = 0;
  if (target != nullptr) {
    taken = 1;
    std::string why;
    if (!target->activate(&why) && !why.empty())
      gpuprobe::base::print_notice("CUPTI unavailable: " + why);
  }
  g_activating.fetch_sub(1, std::memory_order_seq_cst);
  return taken;
}

extern "C" int InitializeInjection(void) {
  if (gpuprobe_on_cuda_init() == 0) static_cast<void>(gpuprobe::session::hand_to_another_copy());
  return 1;
}
