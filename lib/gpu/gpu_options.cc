#include "gpu/gpu_options.h"

#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/option_values.h"
#include "core/gpu_source.h"

namespace gpuprobe::gpu {
namespace {

using base::bad_value;
using base::parse_int;
using Options = GpuOptions;

// `cupti=...+all_api` is not an activity kind: runtime and driver calls, every one of them (by
// default only those gpu/cupti/api_selection.h keeps). A bit past every kind's while parsing.
constexpr std::uint32_t kAllApi = 1u << 31;

Status apply_cupti(std::string_view v, Options& c) {
  const auto bit_of = [](std::string_view name) -> std::optional<std::uint32_t> {
    static constexpr std::pair<std::string_view, GpuActivityKind> kNames[] = {
        {"kernel", GpuActivityKind::kKernel},    {"memcpy", GpuActivityKind::kMemcpy},
        {"memset", GpuActivityKind::kMemset},    {"runtime", GpuActivityKind::kRuntimeApi},
        {"driver", GpuActivityKind::kDriverApi}, {"sync", GpuActivityKind::kSync},
        {"overhead", GpuActivityKind::kOverhead}};
    if (name == "all") return core::kAllGpuKinds;
    if (name == "all_api") return kAllApi;
    for (const auto& [known, kind] : kNames) {
      if (known == name) return core::gpu_kind_bit(kind);
    }
    return std::nullopt;
  };
  std::uint32_t bits = 0;
  if (Status s = base::parse_name_list("cupti", v,
                                       "kernel, memcpy, memset, runtime, driver, sync, overhead, "
                                       "all, all_api",
                                       bit_of, &bits);
      !s.ok()) {
    return s;
  }
  c.all_api = (bits & kAllApi) != 0;
  c.kinds = bits & ~kAllApi;
  if (c.all_api) {
    c.kinds |= core::gpu_kind_bit(GpuActivityKind::kRuntimeApi) |
               core::gpu_kind_bit(GpuActivityKind::kDriverApi);
  }
  return {};
}

Status apply_cupti_api(std::string_view v, Options& c) {
  if (v == "callbacks") {
    c.api_callbacks = true;
  } else if (v == "activity") {
    c.api_callbacks = false;
  } else {
    return bad_value("cupti_api", v, "callbacks or activity");
  }
  return {};
}

Status apply_cupti_buffers(std::string_view v, Options& c) {
  if (!parse_int<std::size_t>(v, 2, 1024, &c.buffers)) {
    return bad_value("cupti_buffers", v, "a buffer count from 2 to 1024");
  }
  return {};
}

Status apply_cupti_buffer_kb(std::string_view v, Options& c) {
  if (!parse_int<std::size_t>(v, 64, 256 * 1024, &c.buffer_kb)) {
    return bad_value("cupti_buffer_kb", v, "a size in KiB from 64 to 262144");
  }
  return {};
}

Status apply_cupti_mb(std::string_view v, Options& c) {
  if (!parse_int<std::size_t>(v, 1, 64 * 1024, &c.max_mb)) {
    return bad_value("cupti_mb", v, "a size in MiB from 1 to 65536");
  }
  return {};
}

Status apply_cupti_start(std::string_view v, Options& c) {
  if (v == "session") {
    c.start_at_cuda_init = false;
  } else if (v == "cuda") {
    c.start_at_cuda_init = true;
  } else {
    return bad_value("cupti_start", v, "session or cuda");
  }
  return {};
}

Status apply_attribution_ms(std::string_view v, Options& c) {
  if (!parse_int<std::uint32_t>(v, 0, 600000, &c.attribution_ms)) {
    return bad_value("attribution_ms", v, "a number of milliseconds from 0 to 600000");
  }
  return {};
}

Status apply_gpu_burst(std::string_view v, Options& c) {
  const std::size_t slash = v.find('/');
  std::int64_t on = 0, every = 0;
  if (slash == std::string_view::npos ||
      !base::parse_duration(v.substr(0, slash), 1'000'000'000, &on) ||
      !base::parse_duration(v.substr(slash + 1), 1'000'000'000, &every) || on < 10'000'000 ||
      every <= on || every > 86400e9) {
    return bad_value("gpu_burst", v,
                     "ON/EVERY, two durations with ON from 10ms and less than EVERY (e.g. 1s/60s)");
  }
  c.burst_on_ns = on;
  c.burst_every_ns = every;
  return {};
}

// Bursts sample the cupti= activity: there must be some.
Status check(Options& c, const base::GivenKeys&) {
  if (c.start_at_cuda_init && c.burst_every_ns != 0) {
    return Status::Error("config key 'gpu_burst' needs cupti_start=session");
  }
  if (c.burst_every_ns != 0 && c.kinds == 0) {
    return Status::Error(
        "config key 'gpu_burst' needs GPU activity to sample: add cupti=KINDS (e.g. cupti=all)");
  }
  return {};
}

// The value of a number field, as help() shows a default.
template <auto Field>
std::string number(const Options& c) {
  return std::to_string(c.*Field);
}
std::string none(const Options&) { return {}; }

constexpr base::OptionSpec<Options> kOptions[] = {
    {"cupti", "all|KIND+KIND...", none,
     "record GPU activity through CUPTI: kernel, memcpy, memset, runtime, driver, sync, "
     "overhead; the API kinds keep launches, copies, sets, allocations, syncs and blocking "
     "waits, and all_api keeps every runtime and driver call",
     apply_cupti},
    {"cupti_api", "callbacks|activity",
     [](const Options& c) { return std::string(c.api_callbacks ? "callbacks" : "activity"); },
     "how the kept runtime and driver calls are recorded: from CUPTI callbacks into the calling "
     "thread's ring, or as CUPTI's API activity records; all_api always uses the latter",
     apply_cupti_api},
    {"cupti_start", "session|cuda",
     [](const Options& c) { return std::string(c.start_at_cuda_init ? "cuda" : "session"); },
     "when CUPTI starts: with the session (which initializes CUDA), or when the program "
     "initializes CUDA, through the driver's injection (CUDA_INJECTION64_PATH naming "
     "libgpuprobe_nvtx.so, as gpuprobe run sets): a process that never uses CUDA never loads "
     "CUPTI, and the children it forks may still use CUDA",
     apply_cupti_start},
    {"cupti_buffers", "N", number<&Options::buffers>,
     "CUPTI activity buffers allocated when the session starts; more are allocated as CUPTI asks "
     "(it keeps one per thread that calls CUDA), up to cupti_mb",
     apply_cupti_buffers},
    {"cupti_buffer_kb", "KIB", number<&Options::buffer_kb>, "size of each CUPTI activity buffer",
     apply_cupti_buffer_kb},
    {"cupti_mb", "MIB", number<&Options::max_mb>,
     "most memory for CUPTI activity buffers; past it CUPTI drops records, counted in "
     "gpu.dropped (gpu.buffers_exhausted counts the refused buffer requests)",
     apply_cupti_mb},
    {"attribution_ms", "MS", number<&Options::attribution_ms>,
     "how long GPU work waits for the gpuprobe range around its launch to close before it is "
     "written without one",
     apply_attribution_ms},
    {"gpu_burst", "ON/EVERY", none,
     "record the cupti= activity only in bursts: ON in every EVERY (e.g. 1s/60s), the first "
     "at the start, and also for dump_after after each dump's moment; the trace's counter "
     "\"gpuprobe GPU recording\" says when, and the GPU metrics say they are sampled",
     apply_gpu_burst},
};

}  // namespace

const base::OptionTable<GpuOptions>& gpu_options() {
  static constexpr base::OptionTable<GpuOptions> kTable{kOptions, std::size(kOptions), check};
  return kTable;
}

}  // namespace gpuprobe::gpu
