#include "tools/trace_summary_sink.h"

#include <algorithm>

#include "formats/category_names.h"
#include "formats/kineto.h"

namespace gpuprobe::tools {
namespace {

const char* kind_name(EventType type) {
  switch (type) {
    case EventType::kRange:
      return "ranges";
    case EventType::kInstant:
      return "instants";
    case EventType::kCounter:
      return "counter values";
    case EventType::kGpu:
      return "gpu";
  }
  return "";
}

}  // namespace

Status TraceSummarySink::open(const TraceInfo& info) {
  info_ = info;
  return {};
}

Status TraceSummarySink::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    const std::int64_t begin = batch.time->wall_ns(e.begin), end = batch.time->wall_ns(e.end);
    first_ns_ = std::min(first_ns_, begin);
    last_ns_ = std::max(last_ns_, end);
    if (e.type == EventType::kGpu) {
      const GpuActivity& a = *e.gpu;
      gpu_counts_[static_cast<int>(a.kind) & 7]++;
      const bool work = a.kind == GpuActivityKind::kKernel || a.kind == GpuActivityKind::kMemcpy ||
                        a.kind == GpuActivityKind::kMemset;
      if (work) {
        streams_[{a.device, a.stream}]++;
        gpu_ns_ += static_cast<std::uint64_t>(std::max<std::int64_t>(end - begin, 0));
      }
      continue;
    }
    if (e.site->category == Category::kStep) {
      ++steps_;
      continue;
    }
    cpu_counts_[static_cast<int>(e.site->category) & 31][static_cast<int>(e.type) % 3]++;
  }
  return {};
}

Status TraceSummarySink::close(const Stats& stats, const TimeBase&) {
  std::FILE* o = out_;
  const double span_ms =
      last_ns_ > first_ns_ ? static_cast<double>(last_ns_ - first_ns_) * 1e-6 : 0;
  // A trace with no process (an empty one, or one whose events name none) has pid 0: not a
  // process to show.
  if (info_.pid != 0) {
    std::fprintf(o, "process      %s%spid %lld\n", info_.process_name.c_str(),
                 info_.process_name.empty() ? "" : ", ", static_cast<long long>(info_.pid));
  } else if (!info_.process_name.empty()) {
    std::fprintf(o, "process      %s\n", info_.process_name.c_str());
  } else if (stats.written == 0) {
    std::fprintf(o, "process      none: the trace holds no events\n");
  } else {
    std::fprintf(o, "process      not named in the trace\n");
  }
  if (info_.rank >= 0) std::fprintf(o, "rank         %d of %d\n", info_.rank, info_.world_size);
  std::fprintf(o, "duration     %.3f ms\n", span_ms);
  std::fprintf(o, "events       %llu\n", static_cast<unsigned long long>(stats.written));
  std::fprintf(o, "steps        %llu\n", static_cast<unsigned long long>(steps_));
  std::fprintf(o, "\nevents by category\n");
  std::map<std::string, std::uint64_t> rows;  // sorted by name
  for (int c = 0; c < 32; ++c) {
    for (int t = 0; t < 3; ++t) {
      if (cpu_counts_[c][t] != 0) {
        rows[std::string(formats::category_name(static_cast<Category>(c), info_.category_names)) +
             " " + kind_name(static_cast<EventType>(t))] = cpu_counts_[c][t];
      }
    }
  }
  for (int k = 0; k < 8; ++k) {
    if (gpu_counts_[k] != 0)
      rows[formats::chrome_gpu_category(static_cast<GpuActivityKind>(k))] = gpu_counts_[k];
  }
  for (const auto& [name, count] : rows)
    std::fprintf(o, "  %-30s %12llu\n", name.c_str(), static_cast<unsigned long long>(count));
  std::fprintf(o, "\nthreads (%zu)\n", stats.threads.size());
  for (const ThreadInfo& t : stats.threads) {
    std::fprintf(o, "  %-30s tid %-8lld events %10llu  dropped %llu\n", t.name.c_str(),
                 static_cast<long long>(t.os_tid), static_cast<unsigned long long>(t.written),
                 static_cast<unsigned long long>(t.dropped));
  }
  if (!info_.devices.empty() || !streams_.empty()) {
    std::fprintf(o, "\ndevices\n");
    for (const DeviceInfo& d : info_.devices) {
      std::fprintf(o, "  GPU %d: %s, %d SMs, compute %d.%d, %.1f GiB\n", d.id, d.name.c_str(),
                   d.num_sms, d.compute_major, d.compute_minor,
                   static_cast<double>(d.total_global_mem) / (1 << 30));
    }
    for (const auto& [key, count] : streams_) {
      std::fprintf(o, "  GPU %u stream %-6u %10llu kernels, copies and sets\n", key.first,
                   key.second, static_cast<unsigned long long>(count));
    }
    std::fprintf(o, "  GPU work, summed over streams: %.3f ms\n",
                 static_cast<double>(gpu_ns_) * 1e-6);
  }
  std::fprintf(o, "\ndropped\n");
  std::fprintf(o, "  events                       %llu\n",
               static_cast<unsigned long long>(stats.dropped));
  if (stats.dropped_no_ring != 0)
    std::fprintf(o, "    of which without a ring    %llu (all rings at rings_mb)\n",
                 static_cast<unsigned long long>(stats.dropped_no_ring));
  std::fprintf(o, "  GPU records (CUPTI, buffers) %llu\n",
               static_cast<unsigned long long>(stats.gpu.dropped));
  if (stats.names_overflowed != 0)
    std::fprintf(o, "  names past a cap             %llu (recorded or read as \"<...>\")\n",
                 static_cast<unsigned long long>(stats.names_overflowed));
  if (!stats.gpu.status.empty() && stats.gpu.status != "off")
    std::fprintf(o, "  GPU tracing status           %s\n", stats.gpu.status.c_str());
  return {};
}

}  // namespace gpuprobe::tools
