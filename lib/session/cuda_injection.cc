#include "session/cuda_injection.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "base/notice.h"
#include "core/nvtx_injection.h"
#include "gpu/deferred_gpu_source.h"

namespace gpuprobe::session {
namespace {

std::atomic<gpu::DeferredGpuSource*> g_target{nullptr};
std::atomic<int> g_activating{0};  // activations under way (a count, not a lock: fork-safe)

// Counts an activation for as long as it runs, whatever leaves it.
class Activating {
 public:
  Activating() noexcept { g_activating.fetch_add(1, std::memory_order_seq_cst); }
  ~Activating() { g_activating.fetch_sub(1, std::memory_order_seq_cst); }
  Activating(const Activating&) = delete;
  Activating& operator=(const Activating&) = delete;
};

// The loaded shared objects' names. Names first: dlopen is not called while dl_iterate_phdr
// holds the loader's list.
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

using Entry = int (*)();

// Calls `visit(handle)` for each other place a copy of gpuprobe may be — the program itself
// (linked with gpuprobe through its CMake target, which exports the entry points from
// executables), then every shared object loaded (Python's gpuprobe._core) — until it returns
// non-null, and returns that.
template <typename Visit>
void* each_other_copy(Visit&& visit) {
  if (void* program = dlopen(nullptr, RTLD_LAZY); program != nullptr) {
    void* found = visit(program);
    dlclose(program);
    if (found != nullptr) return found;
  }
  for (const std::string& name : loaded_object_names()) {
    // RTLD_NOLOAD: an object loaded already, so its code stays after this handle is closed.
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_LOCAL);
    if (handle == nullptr) continue;
    void* found = visit(handle);
    dlclose(handle);
    if (found != nullptr) return found;
  }
  return nullptr;
}

// Calls `symbol` of the first other copy of gpuprobe that exports it and answers non-zero.
int ask_other_copies(const char* symbol, Entry own) {
  int answer = 0;
  each_other_copy([&](void* handle) -> void* {
    auto entry = reinterpret_cast<Entry>(dlsym(handle, symbol));
    answer = entry != nullptr && entry != own ? entry() : 0;
    return answer != 0 ? handle : nullptr;
  });
  return answer;
}

// `symbol` of another copy of gpuprobe, not `own`: of the one whose session records, else of the
// first that exports it; nullptr when none.
void* other_copy_symbol(const char* symbol, const void* own) {
  void* idle = nullptr;  // the first copy found without a session
  void* recording = each_other_copy([&](void* handle) -> void* {
    auto running = reinterpret_cast<Entry>(dlsym(handle, "gpuprobe_session_running"));
    if (running == nullptr || running == &gpuprobe_session_running) return nullptr;
    void* entry = dlsym(handle, symbol);
    if (entry == nullptr || entry == own) return nullptr;
    if (running() != 0) return entry;
    if (idle == nullptr) idle = entry;
    return nullptr;
  });
  return recording != nullptr ? recording : idle;
}

std::string real_path(const char* path) {
  if (path == nullptr || *path == '\0') return {};
  char* resolved = realpath(path, nullptr);
  if (resolved == nullptr) return {};
  std::string out(resolved);
  std::free(resolved);
  return out;
}

}  // namespace

void set_cuda_init_target(gpu::DeferredGpuSource* source) noexcept {
  g_target.store(source, std::memory_order_seq_cst);
  if (source == nullptr) {
    // CUDA's initialization may take seconds (many devices): wait without burning a core.
    for (int spins = 0; g_activating.load(std::memory_order_seq_cst) != 0; ++spins) {
      if (spins < 100)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void forget_cuda_init_target_in_child() noexcept {
  g_target.store(nullptr, std::memory_order_relaxed);
  g_activating.store(0, std::memory_order_relaxed);
}

bool another_copy_loaded() noexcept {
  try {
    return each_other_copy([](void* handle) -> void* {
             void* running = dlsym(handle, "gpuprobe_session_running");
             return running != reinterpret_cast<void*>(&gpuprobe_session_running) ? running
                                                                                  : nullptr;
           }) != nullptr;
  } catch (...) {
    return false;
  }
}

bool cuda_will_inject_this_copy() noexcept {
  try {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&gpuprobe_on_cuda_init), &info) == 0) return false;
    const std::string injected = real_path(std::getenv("CUDA_INJECTION64_PATH"));
    return !injected.empty() && injected == real_path(info.dli_fname);
  } catch (...) {
    return false;
  }
}

}  // namespace gpuprobe::session

extern "C" int gpuprobe_on_cuda_init(void) noexcept {
  using namespace gpuprobe::session;
  try {
    Activating activating;
    gpuprobe::gpu::DeferredGpuSource* target = g_target.load(std::memory_order_seq_cst);
    if (target == nullptr) return 0;
    if (cuda_will_inject_this_copy()) {
      // The session of the library the CUDA driver injected into a program not linked with
      // gpuprobe. With CUPTI started here such a program crashed at exit (H100, CUDA 13): the
      // session's static destructor, registered when the driver loaded this library, ran after
      // the exit handler CUPTI registers as it starts, and cuptiActivityDisable faulted
      // (backtrace, bench/RESULTS.md run 94). stop_environment_session_first_at_exit() below
      // orders the stop before CUPTI's handler; until that is seen to work on a GPU this session
      // records no GPU activity: NVTX ranges and the rest are recorded.
      gpuprobe::base::print_notice(
          "CUPTI is not started in a program not linked with gpuprobe (it crashed such programs "
          "at exit): NVTX ranges are recorded, GPU activity is not");
      return 1;
    }
    std::string why;
    if (target->activate(&why)) {
      stop_environment_session_first_at_exit();  // a no-op where the session is not that one
    } else if (!why.empty()) {
      gpuprobe::base::print_notice("CUPTI unavailable: " + why);
    }
    return 1;
  } catch (...) {
    return 1;  // this copy had the session; CUDA's start goes on without CUPTI
  }
}

extern "C" int InitializeInjection(void) noexcept {
  try {
    if (gpuprobe_on_cuda_init() == 0)
      static_cast<void>(
          gpuprobe::session::ask_other_copies("gpuprobe_on_cuda_init", &gpuprobe_on_cuda_init));
  } catch (...) {
  }
  return 1;
}

#if GPUPROBE_HAVE_NVTX
extern "C" int gpuprobe_bind_nvtx_tool(NvtxGetExportTableFunc_t get_export_table) noexcept {
  return gpuprobe::core::bind_nvtx_tool(get_export_table);
}

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) noexcept {
  try {
    // The copy NVTX loaded (libgpuprobe_nvtx.so, which gpuprobe run names for the whole process
    // tree) has no session where another copy is there — Python's gpuprobe._core: NVTX goes to
    // that one, the one recording if several, even when none records yet (a module binds once,
    // at its first NVTX call; its later sessions are the other copy's). Native children still
    // find the library in NVTX_INJECTION64_PATH.
    if (gpuprobe_session_running() == 0) {
      using Bind = int (*)(NvtxGetExportTableFunc_t);
      if (auto other = reinterpret_cast<Bind>(gpuprobe::session::other_copy_symbol(
              "gpuprobe_bind_nvtx_tool", reinterpret_cast<const void*>(&gpuprobe_bind_nvtx_tool))))
        return other(get_export_table);
    }
  } catch (...) {
  }
  return gpuprobe::core::bind_nvtx_tool(get_export_table);
}
#endif
