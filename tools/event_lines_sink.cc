#include "tools/event_lines_sink.h"

#include <string>

#include "formats/category_names.h"
#include "formats/kineto.h"

namespace gpuprobe::tools {

Status EventLinesSink::open(const TraceInfo& info) {
  start_ns_ = info.start_wall_ns;
  category_names_ = info.category_names;
  std::fprintf(out_, "%14s %12s  %-24s %-16s %s\n", "start ms", "dur us", "where", "category",
               "name");
  return {};
}

Status EventLinesSink::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    const std::int64_t begin = batch.time->wall_ns(e.begin), end = batch.time->wall_ns(e.end);
    const double start_ms = static_cast<double>(begin - start_ns_) * 1e-6;
    const double dur_us = static_cast<double>(end - begin) * 1e-3;
    if (e.type == EventType::kGpu) {
      const GpuActivity& a = *e.gpu;
      const bool api =
          a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi;
      const std::string where =
          api ? "thread " + std::to_string(a.os_tid)
              : "GPU " + std::to_string(a.device) + " stream " + std::to_string(a.stream);
      std::fprintf(out_, "%14.6f %12.3f  %-24s %-16s %s  correlation=%u", start_ms, dur_us,
                   where.c_str(), formats::chrome_gpu_category(a.kind), a.name, a.correlation);
      if (a.kind == GpuActivityKind::kKernel) {
        std::fprintf(out_, " grid=%d,%d,%d block=%d,%d,%d", a.grid[0], a.grid[1], a.grid[2],
                     a.block[0], a.block[1], a.block[2]);
      }
      if (a.bytes != 0) std::fprintf(out_, " bytes=%llu", static_cast<unsigned long long>(a.bytes));
      if (a.range != nullptr) std::fprintf(out_, " range=%s", a.range->name);
      std::fputc('\n', out_);
      continue;
    }
    const ThreadInfo& t = (*batch.threads)[e.thread];
    const std::string where = t.name + " (" + std::to_string(t.os_tid) + ")";
    const std::string category(formats::category_name(e.site->category, category_names_));
    switch (e.type) {
      case EventType::kRange:
        if (e.site->category == Category::kStep) {
          std::fprintf(out_, "%14.6f %12.3f  %-24s %-16s ProfilerStep#%lld\n", start_ms, dur_us,
                       where.c_str(), category.c_str(), static_cast<long long>(e.value));
        } else {
          std::fprintf(out_, "%14.6f %12.3f  %-24s %-16s %s\n", start_ms, dur_us, where.c_str(),
                       category.c_str(), e.site->name);
        }
        break;
      case EventType::kInstant:
        std::fprintf(out_, "%14.6f %12s  %-24s %-16s %s\n", start_ms, "instant", where.c_str(),
                     category.c_str(), e.site->name);
        break;
      default:
        std::fprintf(out_, "%14.6f %12s  %-24s %-16s %s = %g\n", start_ms, "counter", where.c_str(),
                     category.c_str(), e.site->name, e.value);
        break;
    }
  }
  return std::ferror(out_) ? Status::Error("cannot write the dump") : Status();
}

Status EventLinesSink::close(const Stats& stats, const TimeBase&) {
  std::fprintf(out_, "# %llu events; dropped: %llu events, %llu GPU records\n",
               static_cast<unsigned long long>(stats.written),
               static_cast<unsigned long long>(stats.dropped),
               static_cast<unsigned long long>(stats.gpu.dropped));
  return {};
}

}  // namespace gpuprobe::tools
