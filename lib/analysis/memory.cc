#include "analysis/memory.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "analysis/allocator_call.h"
#include "formats/framework_events.h"

#include "absl/strings/str_format.h"

namespace gpuprobe::analysis {
namespace {

namespace fe = formats::framework_events;

std::uint64_t count_within(const std::vector<std::int64_t>& times, std::int64_t from,
                           std::int64_t to) {
  return static_cast<std::uint64_t>(std::lower_bound(times.begin(), times.end(), to) -
                                    std::lower_bound(times.begin(), times.end(), from));
}

nlohmann::json state_json(const MemoryState& s) {
  const auto known = [](double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"allocated_bytes", known(s.allocated)},
          {"reserved_bytes", known(s.reserved)},
          {"inactive_split_bytes", known(s.inactive_split)},
          {"fragmentation", known(s.fragmentation())}};
}

}  // namespace

void Memory::add(const ReportEvent& r) {
  const Event& e = *r.event;
  if (e.type == EventType::kGpu) {
    const GpuActivity& a = *e.gpu;
    if (a.kind != GpuActivityKind::kRuntimeApi && a.kind != GpuActivityKind::kDriverApi) return;
    const AllocatorCall call = allocator_call(a.name);
    if (call == AllocatorCall::kAlloc) mallocs_.push_back(r.begin_ns);
    if (call == AllocatorCall::kFree) frees_.push_back(r.begin_ns);
    return;
  }
  if (e.type != EventType::kCounter) return;
  const char* name = e.site->name;
  double MemoryState::*field = std::strcmp(name, fe::kAllocatedBytes) == 0 ? &MemoryState::allocated
                               : std::strcmp(name, fe::kReservedBytes) == 0 ? &MemoryState::reserved
                               : std::strcmp(name, fe::kInactiveSplitBytes) == 0
                                   ? &MemoryState::inactive_split
                               : std::strcmp(name, fe::kAllocRetries) == 0 ? &MemoryState::retries
                                                                           : nullptr;
  if (field == nullptr || samples_.size() >= kMaxSamples) return;
  samples_.push_back({r.begin_ns, field, e.value});
}

void Memory::finish(const TraceContext&) {
  MemoryResult& r = result_;
  // Readers deliver per thread and per batch: the samples in time order, then each state the
  // one before with the sample's counter changed.
  std::stable_sort(samples_.begin(), samples_.end(),
                   [](const Sample& a, const Sample& b) { return a.at_ns < b.at_ns; });
  states_.reserve(samples_.size());
  // Counters sampled at the same time are one state: the allocator's statistics are read
  // together, and a state with one of them updated and not the other never existed.
  for (const Sample& sample : samples_) {
    if (states_.empty() || states_.back().at_ns != sample.at_ns) {
      states_.push_back(states_.empty() ? MemoryState{} : states_.back());
      states_.back().at_ns = sample.at_ns;
    }
    states_.back().*sample.counter = sample.value;
  }
  samples_ = {};
  std::sort(mallocs_.begin(), mallocs_.end());
  std::sort(frees_.begin(), frees_.end());
  r.malloc_calls = mallocs_.size();
  r.free_calls = frees_.size();
  r.samples = states_.size();
  std::vector<double> fragmentation;
  for (const MemoryState& s : states_) {
    r.max_allocated = std::max(r.max_allocated, s.allocated);
    r.max_reserved = std::max(r.max_reserved, s.reserved);
    r.max_inactive_split = std::max(r.max_inactive_split, s.inactive_split);
    if (s.retries >= 0) r.retries = s.retries;
    if (s.fragmentation() >= 0) fragmentation.push_back(s.fragmentation());
  }
  if (!fragmentation.empty()) {
    r.fragmentation_last = fragmentation.back();
    std::sort(fragmentation.begin(), fragmentation.end());
    r.fragmentation_p50 = fragmentation[fragmentation.size() / 2];
    r.fragmentation_max = fragmentation.back();
  }
  for (const Outlier& o : jitter_.result().outliers) {
    OutlierMemory m;
    m.begin_ns = o.begin_ns;
    const std::int64_t end = o.begin_ns + o.duration_ns;
    const auto after =
        std::upper_bound(states_.begin(), states_.end(), end,
                         [](std::int64_t t, const MemoryState& s) { return t < s.at_ns; });
    if (after != states_.begin()) m.state = *std::prev(after);
    const auto before =
        std::upper_bound(states_.begin(), states_.end(), o.begin_ns,
                         [](std::int64_t t, const MemoryState& s) { return t < s.at_ns; });
    const double retries_before = before != states_.begin() && std::prev(before)->retries >= 0
                                      ? std::prev(before)->retries
                                      : 0;
    if (m.state.retries >= 0) m.retries = std::max(m.state.retries - retries_before, 0.0);
    m.malloc_calls = count_within(mallocs_, o.begin_ns, end);
    m.free_calls = count_within(frees_, o.begin_ns, end);
    r.outliers.push_back(m);
  }
  sample_over_time();
}

void Memory::sample_over_time() {
  std::vector<MemoryState>& out = result_.over_time;
  const std::size_t n = over_time_points_;
  if (n == 0 || states_.empty()) return;
  if (states_.size() <= n) {
    out = states_;
    return;
  }
  const std::int64_t first = states_.front().at_ns, span = states_.back().at_ns - first + 1;
  std::size_t bin = n;  // none yet
  for (const MemoryState& s : states_) {
    const auto b = static_cast<std::size_t>(static_cast<double>(s.at_ns - first) /
                                            static_cast<double>(span) * static_cast<double>(n));
    if (b != bin || out.empty()) {
      out.push_back(s);
      bin = b;
    } else if (s.fragmentation() > out.back().fragmentation()) {
      out.back() = s;
    }
  }
}

void Memory::write_json(const TraceContext& trace, nlohmann::json* report) const {
  using nlohmann::json;
  const MemoryResult& r = result_;
  const auto known = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  json outliers = json::array();
  for (const OutlierMemory& m : r.outliers) {
    json o = {{"start_ms", ms(m.begin_ns - trace.start_ns)},
              {"malloc_calls", m.malloc_calls},
              {"free_calls", m.free_calls},
              {"alloc_retries", m.retries}};
    o["state"] = m.state.at_ns != 0 ? state_json(m.state) : json(nullptr);
    outliers.push_back(o);
  }
  (*report)["memory"] = {{"samples", r.samples},
                         {"max_allocated_bytes", r.max_allocated},
                         {"max_reserved_bytes", r.max_reserved},
                         {"max_inactive_split_bytes", r.max_inactive_split},
                         {"fragmentation_p50", known(r.fragmentation_p50)},
                         {"fragmentation_max", known(r.fragmentation_max)},
                         {"fragmentation_last", known(r.fragmentation_last)},
                         {"alloc_retries", r.retries},
                         {"malloc_calls", r.malloc_calls},
                         {"free_calls", r.free_calls},
                         {"at_outliers", outliers}};
  if (!r.over_time.empty()) {
    // [ms since the trace began, allocated, reserved, inactive split bytes, fragmentation]
    json rows = json::array();
    for (const MemoryState& s : r.over_time) {
      rows.push_back({ms(s.at_ns - trace.start_ns), known(s.allocated), known(s.reserved),
                      known(s.inactive_split), known(s.fragmentation())});
    }
    (*report)["memory"]["over_time"] = std::move(rows);
  }
}

Section describe_memory(const MemoryResult& m) {
  Section s("memory");
  if (m.samples == 0 && m.malloc_calls == 0) return s;
  std::string text =
      absl::StrFormat("memory: %u allocator samples; reserved at most %.1f MiB, allocated %.1f MiB",
                      m.samples, m.max_reserved / (1 << 20), m.max_allocated / (1 << 20));
  if (m.fragmentation_p50 >= 0) {
    absl::StrAppendFormat(&text,
                          "; reserved but not allocated: median %.0f%%, at most %.0f%%, at the "
                          "end %.0f%%",
                          100 * m.fragmentation_p50, 100 * m.fragmentation_max,
                          100 * m.fragmentation_last);
  }
  absl::StrAppendFormat(&text, "; %u cudaMalloc, %u cudaFree calls, %.0f alloc retries",
                        m.malloc_calls, m.free_calls, m.retries);
  s.line(0, std::move(text));
  return s;
}

std::string describe_outlier_memory(const OutlierMemory& m) {
  if (m.state.at_ns == 0 && m.malloc_calls == 0 && m.free_calls == 0) return "";
  std::string text =
      absl::StrFormat("allocator: %u cudaMalloc, %u cudaFree, %.0f retries within it",
                      m.malloc_calls, m.free_calls, m.retries);
  if (m.state.fragmentation() >= 0) {
    absl::StrAppendFormat(&text, "; reserved %.1f MiB, %.0f%% of it not allocated",
                          m.state.reserved / (1 << 20), 100 * m.state.fragmentation());
  }
  return text;
}

}  // namespace gpuprobe::analysis
