// The Sink that feeds the analyses: the window it applies, the trace's own figures, and the JSON
// that every analysis writes a section of.
#include "analysis/trace_report.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

// CUPTI counts a record it could not store for want of a buffer among its dropped records; the
// refused requests say why. Adding the two counted every such loss twice.
TEST_CASE("GPU records lost are CUPTI's dropped count, never plus the refused buffer requests") {
  Trace t;
  t.range(kRequest, 0, kMs);
  Stats stats;
  stats.dropped = 4;
  stats.gpu.dropped = 330;
  stats.gpu.buffers_exhausted = 330;
  const analysis::ReportResult& r = t.run({}, {}, stats);
  CHECK(r.gpu_dropped == 330);
  CHECK(r.dropped == 4);
}

TEST_CASE("only events starting inside the window are reported") {
  Trace t;
  for (int i = 0; i < 10; ++i) t.range(kRequest, i * 10 * kMs, i * 10 * kMs + 5 * kMs);
  analysis::ReportOptions options;
  options.window_begin_ns = 20 * kMs;
  options.window_end_ns = 50 * kMs;
  const analysis::ReportResult& r = t.run(options);
  CHECK(r.events == 3);
  CHECK(r.start_ns == 20 * kMs);
  CHECK(r.end_ns == 45 * kMs);
  REQUIRE(r.names.ranges.size() == 1);
  CHECK(r.names.ranges[0]->count == 3);
}

TEST_CASE("the JSON has the trace's figures and every analysis's section") {
  Trace t;
  for (int i = 0; i < 30; ++i) t.range(kRequest, i * 2 * kMs, i * 2 * kMs + kMs);
  GpuActivity& k = t.activity(GpuActivityKind::kKernel, "gemm", 0, kMs);
  k.stream = 7;
  TraceInfo info;
  info.rank = 3;
  t.run({}, info);
  CHECK(t.report->result().rank == 3);
  const nlohmann::json j = nlohmann::json::parse(t.report->json());
  CHECK(j["schema"] == "gpuprobe.report/1");
  CHECK(j["events"] == 31);
  CHECK(j["duration_ms"] == Approx(59));
  for (const char* key : {"dropped", "verdict", "kernels", "ranges", "gpu", "latency", "roofline",
                          "copies", "compile", "jitter"})
    CHECK(j.contains(key));
  for (const char* key : {"busy_percent", "busy_timeline_percent", "streams", "kernel_ms",
                          "kernel_class_ms", "tiny_kernels", "launch_delay_us"})
    CHECK(j["gpu"].contains(key));
  CHECK(j["kernels"][0]["class"] == "compute");
  CHECK(j["ranges"][0]["calls"] == 30);
  CHECK(j["jitter"]["range"] == "request");
}

// The report's JSON schema, section by section: a new analysis that writes a section of its own
// fails here until its key is added — and, with it, its entry in docs/report.md's JSON table and
// the page's reading of it (docs/CONTRIBUTING.md, recipe 2).
// The top-level keys docs/report.md's JSON table names: the first cell of each row, "| `key` |"
// or "| `key`, `other` |", between the JSON heading and the next one.
std::set<std::string> documented_keys() {
  std::ifstream file(GPUPROBE_REPORT_DOC);
  std::stringstream doc;
  doc << file.rdbuf();
  const std::string text = doc.str();
  const std::size_t begin = text.find("\n## JSON");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = text.find("\n## ", begin + 1);
  std::set<std::string> keys;
  std::istringstream lines(text.substr(begin, end - begin));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);
    for (std::size_t at = cell.find('`'); at != std::string::npos;) {
      const std::size_t close = cell.find('`', at + 1);
      keys.insert(cell.substr(at + 1, close - at - 1));
      at = cell.find('`', close + 1);
    }
  }
  return keys;
}

// A new analysis's keys fail this until docs/report.md's JSON table has them; a key gone, until
// the table drops it.
TEST_CASE("the JSON's top-level keys are exactly the documented sections") {
  std::set<std::string> documented = documented_keys();
  REQUIRE(documented.count("sections") == 1);  // the table was found
  documented.erase("dump");                    // only in a flight recorder dump's report
  Trace t;
  for (int i = 0; i < 30; ++i) t.range(kRequest, i * 2 * kMs, i * 2 * kMs + kMs);
  t.activity(GpuActivityKind::kKernel, "gemm", 0, kMs);
  TraceInfo info;
  info.rank = 3;
  analysis::ReportOptions options;
  options.timeline = true;  // the page's section too
  t.run(options, info);
  const nlohmann::json j = nlohmann::json::parse(t.report->json());
  std::set<std::string> written;
  for (const auto& [key, value] : j.items()) written.insert(key);
  for (const std::string& key : written) {
    CAPTURE(key);
    CHECK(documented.count(key) == 1);  // a new section: document it (see above)
  }
  for (const std::string& key : documented) {
    CAPTURE(key);
    CHECK(written.count(key) == 1);  // a section gone: take it out of the schema and the docs
  }
}

}  // namespace
}  // namespace gpuprobe::test
