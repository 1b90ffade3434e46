#include "sinks/chrome_gpu_events.h"

#include "formats/gpu_args.h"
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
  // The arguments, from the table both readers read back (formats/gpu_args.h).
  out->append(",\"args\":{");
  bool first = true;
  for (const formats::GpuArg& arg : formats::gpu_args()) {
    if (!arg.carried(a)) continue;
    if (!first) out->push_back(',');
    first = false;
    out->push_back('"');
    out->append(arg.name);
    out->append("\":");
    switch (arg.type) {
      case formats::GpuArgType::kInt:
        append_int(out, arg.get_int(a, dur_ns, 0));
        break;
      case formats::GpuArgType::kDouble:
        append_double(out, arg.get_double(a, dur_ns));
        break;
      case formats::GpuArgType::kString:
        append_json_string(out, arg.get_string(a));
        break;
      case formats::GpuArgType::kDim3:
        out->push_back('[');
        for (int i = 0; i < 3; ++i) {
          if (i > 0) out->push_back(',');
          append_int(out, arg.get_int(a, dur_ns, i));
        }
        out->push_back(']');
        break;
    }
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
