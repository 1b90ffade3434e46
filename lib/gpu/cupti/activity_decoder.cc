#include "gpu/cupti/activity_decoder.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/name_table.h"
#include "formats/kineto.h"
#include "gpu/cupti/api_selection.h"

namespace gpuprobe::cupti {
namespace {

const char* intern(std::string_view s) {
  return core::NameTable::get().intern(s, Category::kCuda)->name;
}

const char* memory_kind_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "Managed Static";
    default:
      return "Unknown";
  }
}

const char* overhead_name(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "CUPTI Overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "CUPTI Overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "CUPTI Overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "CUPTI Overhead: resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "CUPTI Overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "CUPTI Overhead: lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "CUPTI Overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "CUPTI Overhead: activity buffer request";
    default:
      return "CUPTI Overhead";
  }
}

// Where and when GPU work ran, and what launched it: the fields kernel, copy and set records
// share under the same names.
template <class Record>
void copy_placement(const Record& r, GpuActivity* out) {
  out->start = r.start;
  out->end = r.end;
  out->correlation = r.correlationId;
  out->device = r.deviceId;
  out->context = r.contextId;
  out->stream = r.streamId;
  out->graph_id = r.graphId;
  out->graph_node_id = r.graphNodeId;
}

}  // namespace

const char* ActivityDecoder::kernel_name(const char* mangled) {
  if (mangled == nullptr) return "<unnamed kernel>";
  key_.assign(mangled);
  if (const auto it = kernel_names_.find(key_); it != kernel_names_.end()) return it->second;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  const char* name = intern(status == 0 && demangled ? demangled.get() : mangled);
  kernel_names_.emplace(key_, name);
  return name;
}

const char* ActivityDecoder::api_name(CUpti_CallbackDomain domain, std::uint32_t cbid) {
  const std::uint64_t key = static_cast<std::uint64_t>(domain) << 32 | cbid;
  if (const auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  const char* raw = nullptr;
  std::string name;
  if (callback_name_ != nullptr && callback_name_(domain, cbid, &raw) == CUPTI_SUCCESS && raw) {
    name = raw;
    // CUPTI names carry the version they were introduced in ("cudaLaunchKernel_v7000"); Kineto
    // and every reader use the plain function name.
    if (const std::size_t v = name.rfind("_v");
        v != std::string::npos && v + 2 < name.size() &&
        name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
      name.resize(v);
    }
  } else {
    name = std::string(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime API " : "driver API ") +
           std::to_string(cbid);
  }
  const char* interned = intern(name);
  api_names_.emplace(key, interned);
  return interned;
}

bool ActivityDecoder::decode(const CUpti_Activity& record, GpuActivity* out) {
  if (!decode_fields(record, out)) return false;
  const GpuActivityKind k = out->kind;
  if (k == GpuActivityKind::kKernel || k == GpuActivityKind::kMemcpy ||
      k == GpuActivityKind::kMemset) {
    // A forced flush can hand back GPU work CUPTI never timed (start 0): placed at tick 0 it
    // stretched a trace back to the machine's boot. It is lost, and counted as such.
    if (out->start == 0 || out->end < out->start) {
      ++untimed_;
      return false;
    }
    context_devices_[out->context] = out->device;
  }
  return true;
}

bool ActivityDecoder::decode_fields(const CUpti_Activity& record, GpuActivity* out) {
  *out = GpuActivity{};
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      copy_placement(k, out);
      out->kind = GpuActivityKind::kKernel;
      out->name = kernel_name(k.name);
      out->grid[0] = k.gridX;
      out->grid[1] = k.gridY;
      out->grid[2] = k.gridZ;
      out->block[0] = k.blockX;
      out->block[1] = k.blockY;
      out->block[2] = k.blockZ;
      out->registers_per_thread = k.registersPerThread;
      out->static_shared_memory = k.staticSharedMemory;
      out->dynamic_shared_memory = k.dynamicSharedMemory;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      copy_placement(m, out);
      out->kind = GpuActivityKind::kMemcpy;
      out->name =
          intern(std::string("Memcpy ") + memcpy_kind_name(static_cast<MemcpyKind>(m.copyKind)) +
                 " (" + memory_kind_name(m.srcKind) + " -> " + memory_kind_name(m.dstKind) + ")");
      out->bytes = m.bytes;
      out->copy_kind = static_cast<MemcpyKind>(m.copyKind);
      out->src_kind = static_cast<MemoryKind>(m.srcKind);
      out->dst_kind = static_cast<MemoryKind>(m.dstKind);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record);
      copy_placement(m, out);
      out->kind = GpuActivityKind::kMemcpy;
      out->name = intern(std::string("Memcpy PtoP (") + memory_kind_name(m.srcKind) + " -> " +
                         memory_kind_name(m.dstKind) + ")");
      out->bytes = m.bytes;
      out->copy_kind = MemcpyKind::kPtoP;
      out->src_kind = static_cast<MemoryKind>(m.srcKind);
      out->dst_kind = static_cast<MemoryKind>(m.dstKind);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      copy_placement(m, out);
      out->kind = GpuActivityKind::kMemset;
      out->name = intern(std::string("Memset (") +
                         memory_kind_name(static_cast<std::uint8_t>(m.memoryKind)) + ")");
      out->bytes = m.bytes;
      out->dst_kind = static_cast<MemoryKind>(m.memoryKind);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      const bool runtime = record.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      out->name =
          api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a.cbid);
      // A call whose name CUPTI could not give ("runtime API 211") is kept: nothing says it is
      // one nobody reads.
      const bool named = std::strncmp(out->name, "runtime API ", 12) != 0 &&
                         std::strncmp(out->name, "driver API ", 11) != 0;
      if (!all_api_ && named &&
          !is_recorded_api(runtime ? ApiDomain::kRuntime : ApiDomain::kDriver, out->name)) {
        ++filtered_;
        return false;
      }
      out->kind = runtime ? GpuActivityKind::kRuntimeApi : GpuActivityKind::kDriverApi;
      out->start = a.start;
      out->end = a.end;
      out->correlation = a.correlationId;
      out->cbid = a.cbid;
      out->thread_id = a.threadId;
      out->process_id = a.processId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = reinterpret_cast<const CUpti_ActivitySynchronization2&>(record);
      out->kind = GpuActivityKind::kSync;
      out->start = s.start;
      out->end = s.end;
      out->sync_kind = static_cast<SyncKind>(s.type);  // CUPTI's values are SyncKind's
      out->name = formats::sync_kind_name(out->sync_kind);
      out->correlation = s.correlationId;
      out->context = s.contextId;
      if (const auto it = context_devices_.find(s.contextId); it != context_devices_.end()) {
        out->device = it->second;
      }
      // Context syncs have no stream; CUPTI reports the invalid id as all ones.
      out->stream = s.streamId == 0xFFFFFFFFu ? 0 : s.streamId;
      out->cuda_event_id = s.cudaEventId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& o = reinterpret_cast<const CUpti_ActivityOverhead3&>(record);
      out->kind = GpuActivityKind::kOverhead;
      out->start = o.start;
      out->end = o.end;
      out->name = overhead_name(o.overheadKind);
      out->correlation = o.correlationId;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace gpuprobe::cupti
