// The seam every analysis of `gpuprobe report` implements: it sees each event once, as it
// streams (add), computes its result when the trace ends (finish), and writes its own section of
// the report's JSON (write_json). TraceReport (trace_report.h) is the Sink that feeds them. Its
// section of the text report and of the page is described once, from its result, in its own .cc
// (section.h), and placed by its line in report_sections.cc: `standalone<Foo>()` for an analysis
// nothing else reads (that line also makes it), a lambda calling `describe_foo(r.foo)` for one
// that TraceReport holds as a member (docs/CONTRIBUTING.md, recipe 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/section.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::analysis {

struct NameStats;
class Names;

// One event inside the report's window, in wall-clock nanoseconds.
struct ReportEvent {
  const Event* event;
  std::int64_t begin_ns, end_ns;
  // CPU ranges and kernels: the row of their name (names.h), found once for every analysis.
  NameStats* row;
};

// What is known of the whole trace when it ends.
struct TraceContext {
  std::int64_t start_ns = 0, end_ns = 0;  // the span of the events seen (0, 0 without any)
  std::uint64_t events = 0;
  const TraceInfo* info = nullptr;
  const Stats* stats = nullptr;  // the trace's totals, and its threads' names
  // Every name's statistics (names.h), finished before any other analysis.
  const Names* names = nullptr;
  // The range whose latency the report explains (jitter.h), for analyses that finish after it
  // (those that stand alone); "" before, or when the trace has none.
  std::string latency_name;
  // The span, at least 1 ns: a denominator.
  double span_ns() const {
    return static_cast<double>(end_ns - start_ns > 0 ? end_ns - start_ns : 1);
  }
};

class Analysis {
 public:
  virtual ~Analysis() = default;
  virtual void add(const ReportEvent& event) = 0;
  virtual void finish(const TraceContext& trace) = 0;
  // Writes this analysis's keys into the report's JSON object.
  virtual void write_json(const TraceContext& trace, nlohmann::json* report) const = 0;
};

// Milliseconds from nanoseconds, the unit of every figure the report shows.
inline double ms(std::int64_t ns) { return static_cast<double>(ns) * 1e-6; }

}  // namespace gpuprobe::analysis
