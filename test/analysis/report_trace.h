// Traces whose answers are known exactly, for the analyses' tests: events in nanoseconds from 0,
// fed to a TraceReport in one batch.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "analysis/trace_report.h"
#include "support/catch.hpp"

namespace gpuprobe::test {

constexpr std::int64_t kMs = 1'000'000, kUs = 1'000;

struct Trace {
  TimeBase time{0, 0, 1.0};
  std::vector<ThreadInfo> threads = std::vector<ThreadInfo>(1);
  std::deque<GpuActivity> gpu;
  std::vector<Event> events;

  // A range on thread `thread` (an index into `threads`, which grows to hold it).
  void range(const CallSite& site, std::int64_t begin, std::int64_t end, std::uint32_t thread = 0) {
    if (thread >= threads.size()) threads.resize(thread + 1);
    events.push_back(Event{EventType::kRange, thread, &site, static_cast<std::uint64_t>(begin),
                           static_cast<std::uint64_t>(end), 0.0});
  }
  GpuActivity& activity(GpuActivityKind kind, const char* name, std::int64_t start,
                        std::int64_t end) {
    GpuActivity& a = gpu.emplace_back();
    a.kind = kind;
    a.name = name;
    a.start = static_cast<std::uint64_t>(start);
    a.end = static_cast<std::uint64_t>(end);
    return a;
  }
  const analysis::ReportResult& run(analysis::ReportOptions options = {}, TraceInfo info = {},
                                    Stats stats = {}) {
    for (const GpuActivity& a : gpu) events.push_back(Event::from_gpu(a));
    threads[0].name = "server";
    // The result points into the report (its name tables): the report lives as long as the trace.
    report = std::make_unique<analysis::TraceReport>(options);
    REQUIRE(report->open(info).ok());
    REQUIRE(report->write(EventBatch{events.data(), events.size(), &time, &threads}).ok());
    stats.threads = threads;
    REQUIRE(report->close(stats, time).ok());
    return report->result();
  }
  std::unique_ptr<analysis::TraceReport> report;
};

constexpr CallSite kRequest{"request", "", "", 0, 0, Category::kApp};
constexpr CallSite kGcPause{"gc gen2", "", "", 0, 0, Category::kGc};
constexpr CallSite kCompile{"torch.compile 0/1", "", "", 0, 0, Category::kCompile};
constexpr CallSite kForward{"forward", "", "", 0, 0, Category::kApp};
constexpr CallSite kParse{"parse", "", "", 0, 0, Category::kApp};
constexpr CallSite kCompute{"compute", "", "", 0, 0, Category::kApp};
constexpr CallSite kLaunch{"launch", "", "", 0, 0, Category::kApp};
constexpr CallSite kGraphRun{"compiled graph (forward)", "", "", 0, 0, Category::kTorch};
constexpr CallSite kFrameRun{"Torch-Compiled Region: 0/0", "", "", 0, 0, Category::kApp};
constexpr CallSite kStep{"ProfilerStep", "", "", 0, 0, Category::kStep};
constexpr CallSite kSpeedup{"compile speedup", "", "", 0, 0, Category::kCompile};

// 1000 requests of 10 ms: parse [0, 3) ms, compute [3, 9) ms holding launch [4, 5) ms, 1 ms of the
// request's own code. Requests 200, 400 and 600 also spend 25 ms between parse and compute in
// code with no range (a CPU gap); each order a trace may deliver ranges in gives the same answer.
inline void requests_with_gaps(Trace& t, bool children_first) {
  std::int64_t at = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t gap = i == 200 || i == 400 || i == 600 ? 25 * kMs : 0;
    const std::int64_t c = at + 3 * kMs + gap;
    if (!children_first) t.range(kRequest, at, c + 7 * kMs);
    t.range(kParse, at, at + 3 * kMs);
    if (!children_first) t.range(kCompute, c, c + 6 * kMs);
    t.range(kLaunch, c + kMs, c + 2 * kMs);
    if (children_first) t.range(kCompute, c, c + 6 * kMs);
    if (children_first) t.range(kRequest, at, c + 7 * kMs);
    at = c + 8 * kMs;
  }
}

}  // namespace gpuprobe::test
