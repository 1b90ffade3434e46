// What a session's events say as Prometheus metrics, computed on the collector from the batches
// every sink gets — nothing is added to the recording path: a duration histogram per range name
// (a bounded set of names, and only the program's own ranges — categories app, python and
// user0..7: PyTorch module ranges and kernel names are never labels), step durations, kernels and
// busy time per GPU, the framework events of framework_metrics.h, the events delivered and
// dropped, and the collector's CPU time.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include "gpuprobe/trace_model.hpp"
#include "metrics/flight_metrics.h"
#include "metrics/framework_metrics.h"
#include "metrics/histogram.h"

namespace gpuprobe::metrics {

// The figures themselves, a value: the collector keeps adding to one, and whoever serves them
// (metrics_endpoint.h) copies it — a few kilobytes — and formats the copy on its own thread.
struct MetricValues {
  struct Device {
    std::uint64_t kernels = 0;
    double busy_seconds = 0;
    std::int64_t covered_until_ns = LLONG_MIN;  // busy time counted up to here
  };
  std::map<std::string, Histogram> ranges;  // by name, sorted: a stable exposition
  Histogram steps;
  std::map<std::uint32_t, Device> devices;
  // With gpu_burst=: when GPU activity was recorded, from the kGpuRecordingCounter switches.
  struct GpuRecording {
    bool sampled = false;
    double closed_seconds = 0;        // in bursts that ended
    std::int64_t open_since_ns = -1;  // the burst going on; -1: none
    void add(bool on, std::int64_t wall_ns);
  };
  GpuRecording gpu_recording;
  FrameworkMetrics framework;    // compiles, GC pauses, the CUDA allocator (gpuprobe.torch)
  FlightFigures flight;          // the flight recorder's dumps and memory, when it runs
  std::uint64_t ring_bytes = 0;  // the thread rings' memory
  std::uint64_t names_overflowed = 0;
  std::uint64_t events = 0;
  std::uint64_t dropped = 0;
  double collector_cpu_seconds = 0;  // of the thread that adds batches: the collector
  int rank = -1;                     // the distributed rank, a label of every sample when known

  // Every metric, in `format`.
  std::string exposition(TextFormat format = TextFormat::kPrometheus) const;
};

class SessionMetrics {
 public:
  // Ranges of the first `max_names` names (of `names`, when given) get a histogram each; later
  // names are counted in gpuprobe_range_names_overflowed_total.
  explicit SessionMetrics(RangeSelection selection = {}) : selection_(std::move(selection)) {}

  // The session's rank (TraceInfo::rank), a label of every sample; -1: none.
  void set_rank(int rank) { values_.rank = rank; }
  // Where the flight recorder's figures and the rings' memory come from, read after each
  // batch; none: not written.
  void set_hooks(const SessionHooks& hooks) {
    flight_figures_ = hooks.figures;
    ring_bytes_ = hooks.ring_bytes;
  }
  void add(const EventBatch& batch);
  // The session's final figures, which a batch does not carry.
  void finish(const Stats& stats);
  const MetricValues& values() const noexcept { return values_; }
  std::string exposition() const { return values_.exposition(); }

 private:
  // The site's histogram; null past the name cap, or when not selected (`*selected` false).
  Histogram* histogram_for(const CallSite* site, bool* selected);

  RangeSelection selection_;
  MetricValues values_;
  // null: past the name cap, or not selected (in not_selected_)
  std::unordered_map<const CallSite*, Histogram*> by_site_;
  std::unordered_map<const CallSite*, bool> not_selected_;
  std::function<FlightFigures()> flight_figures_;
  std::function<std::uint64_t()> ring_bytes_;
};

}  // namespace gpuprobe::metrics
