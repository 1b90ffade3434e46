#include "formats/gpu_args.h"

#include "formats/saturate.h"

namespace gpuprobe::formats {
namespace {

using A = const GpuActivity&;

bool is_api(A a) {
  return a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi;
}
bool on_device(A a) { return !is_api(a) && a.kind != GpuActivityKind::kOverhead; }
bool kernel(A a) { return a.kind == GpuActivityKind::kKernel; }
bool copy_or_set(A a) {
  return a.kind == GpuActivityKind::kMemcpy || a.kind == GpuActivityKind::kMemset;
}
bool sync(A a) { return a.kind == GpuActivityKind::kSync; }
bool waits_on_event(A a) {
  return sync(a) &&
         (a.sync_kind == SyncKind::kEventSynchronize || a.sync_kind == SyncKind::kStreamWaitEvent);
}
bool always(A) { return true; }

template <class T>
std::int64_t as_int(T v) {
  return static_cast<std::int64_t>(v);
}

// An integer field of GpuActivity, read and written.
#define GPUPROBE_INT_ARG(NAME, CARRIED, FIELD)                                               \
  GpuArg {                                                                                   \
    NAME, GpuArgType::kInt, CARRIED, [](A a, std::int64_t, int) { return as_int(a.FIELD); }, \
        nullptr, nullptr,                                                                    \
        [](GpuActivity& a, int, double v) { a.FIELD = saturate<decltype(a.FIELD)>(v); }, {}  \
  }

const GpuArg kArgs[] = {
    GPUPROBE_INT_ARG("correlation", always, correlation),
    GPUPROBE_INT_ARG("cbid", is_api, cbid),
    GPUPROBE_INT_ARG("device", on_device, device),
    GPUPROBE_INT_ARG("context", on_device, context),
    GPUPROBE_INT_ARG("stream", on_device, stream),
    GPUPROBE_INT_ARG("registers per thread", kernel, registers_per_thread),
    // Kineto's sum, which HTA and the TensorBoard plugin read; derived, so not read back.
    GpuArg{"shared memory",
           GpuArgType::kInt,
           kernel,
           [](A a, std::int64_t, int) {
             return as_int(a.static_shared_memory) + a.dynamic_shared_memory;
           },
           nullptr,
           nullptr,
           nullptr,
           {}},
    GPUPROBE_INT_ARG("static shared memory", kernel, static_shared_memory),
    GPUPROBE_INT_ARG("dynamic shared memory", kernel, dynamic_shared_memory),
    GpuArg{"grid",
           GpuArgType::kDim3,
           kernel,
           [](A a, std::int64_t, int i) { return as_int(a.grid[i]); },
           nullptr,
           nullptr,
           [](GpuActivity& a, int i, double v) { a.grid[i] = saturate<std::int32_t>(v); },
           {"grid.x", "grid.y", "grid.z"}},
    GpuArg{"block",
           GpuArgType::kDim3,
           kernel,
           [](A a, std::int64_t, int i) { return as_int(a.block[i]); },
           nullptr,
           nullptr,
           [](GpuActivity& a, int i, double v) { a.block[i] = saturate<std::int32_t>(v); },
           {"block.x", "block.y", "block.z"}},
    GPUPROBE_INT_ARG("bytes", copy_or_set, bytes),
    GpuArg{"memory bandwidth (GB/s)",
           GpuArgType::kDouble,
           copy_or_set,
           nullptr,
           [](A a, std::int64_t dur_ns) {
             return dur_ns > 0 ? static_cast<double>(a.bytes) / static_cast<double>(dur_ns) : 0.0;
           },
           nullptr,
           nullptr,
           {}},
    GpuArg{"cuda_sync_kind",
           GpuArgType::kString,
           sync,
           nullptr,
           nullptr,
           [](A a) { return a.name; },
           nullptr,
           {}},
    GPUPROBE_INT_ARG("wait_on_cuda_event_id", waits_on_event, cuda_event_id),
    GpuArg{"bytes moved (declared)",
           GpuArgType::kDouble,
           [](A a) { return a.declared_bytes > 0; },
           nullptr,
           [](A a, std::int64_t) { return a.declared_bytes; },
           nullptr,
           [](GpuActivity& a, int, double v) { a.declared_bytes = v; },
           {}},
    GpuArg{"flops (declared)",
           GpuArgType::kDouble,
           [](A a) { return a.declared_flops > 0; },
           nullptr,
           [](A a, std::int64_t) { return a.declared_flops; },
           nullptr,
           [](GpuActivity& a, int, double v) { a.declared_flops = v; },
           {}},
    GpuArg{"arithmetic intensity (flop/byte)",
           GpuArgType::kDouble,
           [](A a) { return a.declared_bytes > 0 && a.declared_flops > 0; },
           nullptr,
           [](A a, std::int64_t) { return a.declared_flops / a.declared_bytes; },
           nullptr,
           nullptr,
           {}},
    GpuArg{"range",
           GpuArgType::kString,
           [](A a) { return a.range != nullptr; },
           nullptr,
           nullptr,
           [](A a) { return a.range->name; },
           nullptr,
           {}},
    GPUPROBE_INT_ARG(
        "graph id", [](A a) { return a.graph_id != 0; }, graph_id),
    GPUPROBE_INT_ARG(
        "graph node id", [](A a) { return a.graph_id != 0; }, graph_node_id),
};

#undef GPUPROBE_INT_ARG

}  // namespace

const GpuArg* GpuArgTable::begin() const { return kArgs; }
const GpuArg* GpuArgTable::end() const { return kArgs + sizeof kArgs / sizeof kArgs[0]; }
GpuArgTable gpu_args() { return {}; }

const GpuArg* find_gpu_arg(std::string_view name, int* component) {
  *component = 0;
  for (const GpuArg& arg : kArgs) {
    if (name == arg.name) return &arg;
    if (arg.type != GpuArgType::kDim3) continue;
    for (int i = 0; i < 3; ++i) {
      if (name == arg.components[i]) {
        *component = i;
        return &arg;
      }
    }
  }
  return nullptr;
}

}  // namespace gpuprobe::formats
