#include "gpu/cupti/cupti_tracer.h"

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>

#include "base/notice.h"
#include "core/gpu_source.h"
#include "gpu/cupti/api_selection.h"
#include "gpu/cupti/release_at_api_exit.h"
#include "gpuprobe/detail/gate.hpp"

namespace gpuprobe::cupti {
namespace {

// CUPTI's callbacks are plain functions: they reach the running session's pool through this
// pointer (one session records at a time). Null outside a session: requests then get no buffer.
std::atomic<ActivityBufferPool*> g_pool{nullptr};

// The gate bits that select the session's clock, for the timestamp callback.
std::atomic<std::uint64_t> g_clock_bits{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  ActivityBufferPool* pool = g_pool.load(std::memory_order_acquire);
  *max_records = 0;  // as many as fit
  *buffer = pool != nullptr ? pool->acquire() : nullptr;
  *size = *buffer != nullptr ? pool->buffer_bytes() : 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  ActivityBufferPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr && buffer != nullptr) pool->complete(buffer, valid);
}

// CUPTI stamps every record, CPU- and GPU-side, through this: GPU and CPU events share one clock.
uint64_t CUPTIAPI session_timestamp() {
  return detail::now_ticks(g_clock_bits.load(std::memory_order_relaxed));
}

struct KindSpec {
  GpuActivityKind kind;
  CUpti_ActivityKind cupti;
  const char* name;
};

constexpr KindSpec kKinds[] = {
    {GpuActivityKind::kKernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {GpuActivityKind::kMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {GpuActivityKind::kMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {GpuActivityKind::kMemset, CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {GpuActivityKind::kRuntimeApi, CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {GpuActivityKind::kDriverApi, CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {GpuActivityKind::kSync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {GpuActivityKind::kOverhead, CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD"},
};

}  // namespace

CuptiTracer::CuptiTracer(const CuptiLibrary& library, const gpu::ActivityOptions& options)
    : library_(library),
      options_(options),
      pool_(options.buffer_count, options.buffer_bytes, options.max_bytes),
      decoder_(library.api().get_callback_name, options.all_api) {}

CuptiTracer::~CuptiTracer() {
  if (!finalized_) {
    disable();
    finalize();
  }
}

Status CuptiTracer::check(CUptiResult result, const char* call) const {
  if (result == CUPTI_SUCCESS) return {};
  std::string message = std::string(call) + ": " + library_.describe(result);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    message +=
        " (another profiler such as torch.profiler, Nsight Systems or compute-sanitizer holds "
        "CUPTI)";
  } else if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    message += " (profiling is restricted to admin users: NVreg_RestrictProfilingToAdminUsers)";
  }
  return Status::Error(message);
}

Status CuptiTracer::start() {
  const CuptiApi& api = library_.api();
  // On failure undo what was done, but never finalize: CUPTI may belong to another profiler,
  // which finalizing would break.
  const auto fail = [this, &api](Status s) {
    disable();
    g_pool.store(nullptr, std::memory_order_release);
    if (subscriber_ != nullptr) api.unsubscribe(subscriber_);
    subscriber_ = nullptr;
    finalized_ = true;
    return s;
  };
  if (Status s =
          check(api.subscribe(&subscriber_, &ApiCallbacks::on_call, nullptr), "cuptiSubscribe");
      !s.ok()) {
    subscriber_ = nullptr;
    return fail(s);
  }
  g_clock_bits.store(options_.clock == core::ClockSource::kTsc ? detail::kTscBit : 0,
                     std::memory_order_relaxed);
  // The clock must be registered before any kind is enabled, or early records use CUPTI's own.
  if (Status s = check(api.activity_register_timestamp_callback(&session_timestamp),
                       "cuptiActivityRegisterTimestampCallback");
      !s.ok()) {
    return fail(s);
  }
  if (Status s = check(api.activity_register_callbacks(&buffer_requested, &buffer_completed),
                       "cuptiActivityRegisterCallbacks");
      !s.ok()) {
    return fail(s);
  }
  g_pool.store(&pool_, std::memory_order_release);
  if (Status s = enable_kinds(); !s.ok()) return fail(s);
  attached_ = true;
  return {};
}

Status CuptiTracer::enable_kinds() {
  const CuptiApi& api = library_.api();
  for (const KindSpec& k : kKinds) {
    if (!(options_.kinds & core::gpu_kind_bit(k.kind))) continue;
    const bool api_kind =
        k.kind == GpuActivityKind::kRuntimeApi || k.kind == GpuActivityKind::kDriverApi;
    const bool runtime = k.kind == GpuActivityKind::kRuntimeApi;
    if (api_kind && !options_.all_api && options_.api_callbacks) {
      Status s = callbacks_.enable(api, subscriber_, runtime, &decoder_);
      if (s.ok()) continue;
      base::print_notice("recording " + std::string(k.name) +
                         " calls as CUPTI activity records: " + s.message());
    }
    const std::string call = std::string("cuptiActivityEnable(") + k.name + ")";
    if (Status s = check(api.activity_enable(k.cupti), call.c_str()); !s.ok()) return s;
    enabled_.push_back(k.cupti);
    if (api_kind && !options_.all_api) {
      // The calls nobody reads are never recorded: switched off one by one, after the kind
      // (enabling the kind turns every call back on, which is also what undoes this for the
      // next session). Where CUPTI cannot, the decoder drops them as they arrive, said once.
      if (Status s = narrow_api_kind(runtime); !s.ok()) {
        base::print_notice("recording every " + std::string(k.name) +
                           " call and dropping the unread ones after: " + s.message());
      }
    }
  }
  return {};
}

Status CuptiTracer::narrow_api_kind(bool runtime) {
  const CuptiApi& api = library_.api();
  const auto enable = runtime ? api.activity_enable_runtime_api : api.activity_enable_driver_api;
  const char* call = runtime ? "cuptiActivityEnableRuntimeApi" : "cuptiActivityEnableDriverApi";
  if (enable == nullptr || api.get_callback_name == nullptr) {
    return Status::Error(std::string(call) + " is not in this CUPTI");
  }
  Status failed;
  for_each_api(api.get_callback_name, runtime,
               [&](CUpti_CallbackDomain, CUpti_CallbackId cbid, const char*, bool recorded) {
                 if (recorded) return true;
                 failed = check(enable(cbid, 0), call);
                 return failed.ok();
               });
  return failed;
}

void CuptiTracer::parse(std::uint8_t* buffer, std::size_t valid, std::vector<GpuActivity>* out) {
  CUpti_Activity* record = nullptr;
  const CuptiApi& api = library_.api();
  while (api.activity_get_next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    GpuActivity activity;
    if (decoder_.decode(*record, &activity)) out->push_back(activity);
  }
}

void CuptiTracer::add_api_call(std::int64_t os_tid, std::uint32_t pthread_id, std::uint64_t begin,
                               std::uint64_t end, const CallSite* site, std::uint32_t correlation) {
  GpuActivity call;
  if (callbacks_.to_activity(os_tid, pthread_id, begin, end, site, correlation, &call)) {
    calls_.push_back(call);
  }
}

void CuptiTracer::collect(bool final, std::vector<GpuActivity>* out) {
  out->insert(out->end(), calls_.begin(), calls_.end());
  calls_.clear();
  out->insert(out->end(), parked_.begin(), parked_.end());
  parked_.clear();
  if (finalized_ || !attached_) return;
  if (releasing_) {
    // No CUPTI call until the release has happened: only what CUPTI handed back so far.
    if (!release_at_api_exit::take_released()) {
      pool_.consume([&](std::uint8_t* buffer, std::size_t valid) { parse(buffer, valid, out); });
      return;
    }
    released(out);
    if (!restart_) return;
    restart_ = false;  // a burst fell due while the release drained: it starts now
    if (Status s = start(); !s.ok()) {
      base::print_notice("gpu_burst: cannot switch GPU recording on: " + s.message());
    }
    return;
  }
  const CuptiApi& api = library_.api();
  api.activity_flush_all(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  pool_.consume([&](std::uint8_t* buffer, std::size_t valid) { parse(buffer, valid, out); });
  size_t dropped = 0;
  if (api.activity_get_num_dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS)
    dropped_ += dropped;
}

Status CuptiTracer::set_recording(bool on) {
  if (finalized_) return Status::Error("CUPTI was released");
  // Off is CUPTI let go of as at a session's end, and on is it taken again as at a start: never
  // CUPTI's kinds switched off and on under one subscription (which corrupted the heap of a
  // program that used CUPTI after gpuprobe, on the H200). The letting go happens at the
  // program's next CUDA call, on its thread (release_at_api_exit.h). Between bursts the program
  // pays nothing of CUPTI; another profiler may take it then, and the next burst says so and
  // recording stops.
  if (!on) {
    restart_ = false;
    if (!attached_ || releasing_) return {};
    Status s = release_at_api_exit::request(library_.api(), subscriber_, enabled_,
                                            options_.burst_drain_ns);
    if (s.ok()) releasing_ = true;
    return s;
  }
  if (releasing_) {
    const Settled settled = settle_release(&parked_, /*end_now=*/false);
    if (settled == Settled::kAttached) return {};  // never let go of: still recording
    if (settled == Settled::kDraining) {
      restart_ = true;  // taken again by the collection that sees the release done
      return {};
    }
  }
  if (attached_) return {};
  return start();
}

CuptiTracer::Settled CuptiTracer::settle_release(std::vector<GpuActivity>* keep, bool end_now) {
  using release_at_api_exit::Withdrawal;
  const CuptiApi& api = library_.api();
  const Withdrawal w = release_at_api_exit::withdraw(api, subscriber_);
  if (w == Withdrawal::kWithdrawn) {
    releasing_ = false;
    callbacks_.reenable(api, subscriber_);  // the withdrawal turned whole domains off
    return Settled::kAttached;
  }
  if (w == Withdrawal::kDraining) {
    if (!end_now) return Settled::kDraining;
    release_at_api_exit::finish_now();
  }
  release_at_api_exit::take_released();
  released(keep);
  return Settled::kReleased;
}

void CuptiTracer::released(std::vector<GpuActivity>* keep) {
  releasing_ = false;
  enabled_.clear();
  callbacks_.forget();
  subscriber_ = nullptr;  // finalized with CUPTI
  dropped_ += release_at_api_exit::dropped();
  end_attachment(keep);
}

void CuptiTracer::disable() {
  restart_ = false;
  if (releasing_) settle_release(&parked_, /*end_now=*/true);
  if (!attached_) return;
  if (subscriber_ != nullptr) callbacks_.disable(library_.api(), subscriber_);
  for (CUpti_ActivityKind kind : enabled_) library_.api().activity_disable(kind);
  enabled_.clear();
}

void CuptiTracer::detach(std::vector<GpuActivity>* keep) {
  const CuptiApi& api = library_.api();
  disable();
  if (!attached_) return;  // let go of at a CUDA call meanwhile
  // Whatever CUPTI still holds comes back now, while the pool is alive.
  api.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  if (api.activity_get_num_dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS)
    dropped_ += dropped;
  if (subscriber_ != nullptr) api.unsubscribe(subscriber_);
  subscriber_ = nullptr;
  api.finalize();
  end_attachment(keep);
}

void CuptiTracer::end_attachment(std::vector<GpuActivity>* keep) {
  // No CUPTI call from here: any would attach CUPTI to the process again.
  pool_.consume([&](std::uint8_t* buffer, std::size_t valid) {
    if (keep != nullptr) parse(buffer, valid, keep);
  });
  g_pool.store(nullptr, std::memory_order_release);
  attached_ = false;
  if (const std::size_t held = pool_.abandon_held(); held > 0) {
    base::print_notice("CUPTI kept " + std::to_string(held) + " activity buffer(s) of " +
                       std::to_string(pool_.buffer_bytes() >> 10) +
                       " KiB after it was released: left allocated, not freed");
  }
}

void CuptiTracer::finalize() {
  if (finalized_) return;
  finalized_ = true;
  if (attached_) detach(nullptr);  // the records still held are discarded
}

gpu::ActivityStats CuptiTracer::stats() const {
  gpu::ActivityStats s;
  // Records CUPTI handed back without timestamps are lost like those it dropped: one figure.
  s.dropped = dropped_ + decoder_.untimed();
  s.buffers_exhausted = pool_.exhausted();
  s.filtered = decoder_.filtered();
  s.untimed = decoder_.untimed();
  return s;
}

}  // namespace gpuprobe::cupti

namespace gpuprobe::gpu {

bool cuda_initialized_in_process() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  using GetCurrent = CUresult (*)(CUcontext*);
  auto get_current = reinterpret_cast<GetCurrent>(dlsym(handle, "cuCtxGetCurrent"));
  CUcontext context = nullptr;
  const bool initialized =
      get_current != nullptr && get_current(&context) != CUDA_ERROR_NOT_INITIALIZED;
  dlclose(handle);
  return initialized;
}

std::unique_ptr<ActivitySource> start_activity_source(const ActivityOptions& options,
                                                      std::string* why) {
  const cupti::CuptiLibrary* library = nullptr;
  if (Status s = cupti::CuptiLibrary::get(&library, options.inside_cuda_init); !s.ok()) {
    *why = s.message();
    return nullptr;
  }
  try {
    auto tracer = std::make_unique<cupti::CuptiTracer>(*library, options);
    if (Status s = tracer->start(); !s.ok()) {
      *why = s.message();
      return nullptr;
    }
    return tracer;
  } catch (const std::exception& e) {
    *why = std::string("cannot allocate activity buffers: ") + e.what();
    return nullptr;
  }
}

}  // namespace gpuprobe::gpu
