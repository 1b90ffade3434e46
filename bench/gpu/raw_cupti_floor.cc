#include "raw_cupti_floor.h"

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace raw_cupti {
namespace {

constexpr std::size_t kBuffers = 8;
constexpr std::size_t kBufferBytes = 4 << 20;

std::vector<std::uint8_t> g_storage(kBuffers* kBufferBytes + 8);
std::mutex g_mu;
std::vector<std::uint8_t*> g_free;
std::atomic<std::uint64_t> g_kernels{0};
bool g_runtime = false;
bool g_driver = false;
bool g_malloc = false;
std::atomic<bool> g_flushing{false};
std::thread g_flusher;

uint64_t CUPTIAPI tsc() { return __builtin_ia32_rdtsc(); }

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  if (g_malloc) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer != nullptr ? kBufferBytes : 0;
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  *buffer = g_free.empty() ? nullptr : g_free.back();
  if (*buffer != nullptr) g_free.pop_back();
  *size = *buffer != nullptr ? kBufferBytes : 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::uint64_t kernels = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    kernels += record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  }
  g_kernels += kernels;
  if (g_malloc) {
    std::free(buffer);
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_free.push_back(buffer);
}

bool ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* text = "?";
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "raw CUPTI: %s: %s\n", what, text);
  return false;
}

}  // namespace

bool start(const Options& options) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_free.clear();
    std::uint8_t* base = g_storage.data();
    base += (8 - reinterpret_cast<std::uintptr_t>(base) % 8) % 8;
    for (std::size_t i = 0; i < kBuffers; ++i) g_free.push_back(base + i * kBufferBytes);
  }
  g_kernels = 0;
  g_runtime = options.runtime;
  g_driver = options.driver;
  g_malloc = options.malloc_buffers;
  if (options.tsc_timestamps &&
      !ok(cuptiActivityRegisterTimestampCallback(&tsc), "timestamp callback")) {
    return false;
  }
  const bool started =
      ok(cuptiActivityRegisterCallbacks(&requested, &completed), "register callbacks") &&
      ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable kernel") &&
      (!options.runtime ||
       ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enable runtime")) &&
      (!options.driver || ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "enable driver"));
  if (started && options.flush_ms > 0) {
    g_flushing = true;
    g_flusher = std::thread([period = options.flush_ms] {
      while (g_flushing) {
        std::this_thread::sleep_for(std::chrono::milliseconds(period));
        cuptiActivityFlushAll(0);
      }
    });
  }
  return started;
}

std::uint64_t stop() {
  g_flushing = false;
  if (g_flusher.joinable()) g_flusher.join();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (g_runtime) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (g_driver) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  cuptiFinalize();
  return g_kernels.load();
}

}  // namespace raw_cupti
