#include "sinks/chrome_gpu_events.h"

#include "formats/kineto.h"
#include "sinks/json_writer.h"

namespace gpuprobe::sinks {
namespace {

using formats::api_thread_tid;
using formats::chrome_gpu_category;
using formats::gpu_pid;
using formats::kOverheadPid;
using formats::starts_flow;

void key(std::string* out, const char* name) {
  out->push_back(',');
  out->push_back('"');
  out->append(name);
  out->append("\":");
}

void key_int(std::string* out, const char* name, std::int64_t v) {
  key(out, name);
  append_int(out, v);
}

void key_dim3(std::string* out, const char* name, const std::int32_t (&v)[3]) {
  key(out, name);
  out->push_back('[');
  append_int(out, v[0]);
  out->push_back(',');
  append_int(out, v[1]);
  out->push_back(',');
  append_int(out, v[2]);
  out->push_back(']');
}

bool is_api(GpuActivityKind kind) {
  return kind == GpuActivityKind::kRuntimeApi || kind == GpuActivityKind::kDriverApi;
}

}  // namespace

void append_gpu_event(std::string* out, const GpuActivity& a, const TimeBase& time,
                      std::int64_t base_ns, std::int64_t host_pid) {
  const std::int64_t start_ns = time.wall_ns(a.start);
  const std::int64_t dur_ns = time.wall_ns(a.end) - start_ns;
  std::int64_t pid = gpu_pid(a.device);
  std::int64_t tid = a.stream;
  if (is_api(a.kind)) {
    pid = host_pid;
    tid = api_thread_tid(a);
  } else if (a.kind == GpuActivityKind::kOverhead) {
    pid = kOverheadPid;
    tid = 0;
  }
  out->append("{\"ph\":\"X\",\"cat\":\"");
  out->append(chrome_gpu_category(a.kind));
  out->append("\",\"name\":");
  append_json_string(out, a.name);
  key_int(out, "pid", pid);
  key_int(out, "tid", tid);
  key(out, "ts");
  append_micros(out, start_ns - base_ns);
  key(out, "dur");
  append_micros(out, dur_ns);
  out->append(",\"args\":{\"correlation\":");
  append_int(out, a.correlation);
  switch (a.kind) {
    case GpuActivityKind::kRuntimeApi:
    case GpuActivityKind::kDriverApi:
      key_int(out, "cbid", a.cbid);
      break;
    case GpuActivityKind::kOverhead:
      break;
    default:
      key_int(out, "device", a.device);
      key_int(out, "context", a.context);
      key_int(out, "stream", a.stream);
      break;
  }
  switch (a.kind) {
    case GpuActivityKind::kKernel:
      key_int(out, "registers per thread", a.registers_per_thread);
      key_int(out, "shared memory",
              static_cast<std::int64_t>(a.static_shared_memory) + a.dynamic_shared_memory);
      key_int(out, "static shared memory", a.static_shared_memory);
      key_int(out, "dynamic shared memory", a.dynamic_shared_memory);
      key_dim3(out, "grid", a.grid);
      key_dim3(out, "block", a.block);
      break;
    case GpuActivityKind::kMemcpy:
    case GpuActivityKind::kMemset:
      key_int(out, "bytes", static_cast<std::int64_t>(a.bytes));
      key(out, "memory bandwidth (GB/s)");
      append_double(out,
                    dur_ns > 0 ? static_cast<double>(a.bytes) / static_cast<double>(dur_ns) : 0.0);
      break;
    case GpuActivityKind::kSync:
      key(out, "cuda_sync_kind");
      append_json_string(out, a.name);
      if (a.sync_kind == SyncKind::kEventSynchronize || a.sync_kind == SyncKind::kStreamWaitEvent) {
        key_int(out, "wait_on_cuda_event_id", a.cuda_event_id);
      }
      break;
    default:
      break;
  }
  if (a.declared_bytes > 0) {
    key(out, "bytes moved (declared)");
    append_double(out, a.declared_bytes);
  }
  if (a.declared_flops > 0) {
    key(out, "flops (declared)");
    append_double(out, a.declared_flops);
  }
  if (a.declared_bytes > 0 && a.declared_flops > 0) {
    key(out, "arithmetic intensity (flop/byte)");
    append_double(out, a.declared_flops / a.declared_bytes);
  }
  if (a.range != nullptr) {
    key(out, "range");
    append_json_string(out, a.range->name);
  }
  if (a.graph_id != 0) {
    key_int(out, "graph id", a.graph_id);
    key_int(out, "graph node id", static_cast<std::int64_t>(a.graph_node_id));
  }
  out->append("}}");

  // The launch starts the arrow at its start; the GPU work ends it at its own start ("bp":"e":
  // bind to the enclosing slice), as Kineto draws them.
  const bool flow_start = is_api(a.kind) && starts_flow(a.name);
  const bool flow_end =
      !is_api(a.kind) && a.kind != GpuActivityKind::kOverhead && a.correlation != 0;
  if (!flow_start && !flow_end) return;
  out->append(flow_start ? ",\n{\"ph\":\"s\",\"id\":" : ",\n{\"ph\":\"f\",\"id\":");
  append_int(out, a.correlation);
  key_int(out, "pid", pid);
  key_int(out, "tid", tid);
  key(out, "ts");
  append_micros(out, start_ns - base_ns);
  out->append(flow_start ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"
                         : ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
}

}  // namespace gpuprobe::sinks
