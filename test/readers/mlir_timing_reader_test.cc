// MLIR's pass timing report read as a trace: each pass a range of its wall time, nested as the
// report indents it (text) or lists it (JSON), laid end to end inside its parent; the same
// answers from both forms; found by its content through the entry point every trace file uses;
// damaged or foreign input gives one error naming the line or byte.
#include "readers/mlir_timing_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "readers/trace_file.h"
#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

// As mlir-opt-19 prints them (fuzz/corpus/mlir_timing/ holds a real run of each form).
constexpr char kTree[] =
    R"(===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0130 seconds

  ----User Time----  ----Wall Time----  ----Name----
    0.0040 ( 22.5%)    0.0040 ( 30.8%)  Parser
    0.0050 ( 15.6%)    0.0030 ( 23.1%)  'func.func' Pipeline
    0.0020 ( 12.1%)    0.0015 ( 11.5%)    Canonicalizer
    0.0010 (  1.7%)    0.0011 (  8.5%)    CSE
    0.0002 (  0.1%)    0.0002 (  1.5%)      (A) DominanceInfo
    0.0010 (  7.7%)    0.0010 (  7.7%)  Canonicalizer
    0.0020 ( 11.9%)    0.0020 ( 15.4%)  Output
    0.0010 (  8.8%)    0.0010 (  7.7%)  Rest
    0.0160 (100.0%)    0.0130 (100.0%)  Total
)";

constexpr char kJson[] = R"([
{"user": {"duration":   0.0040, "percentage":  22.5}, "wall": {"duration":   0.0040, "percentage":  30.8}, "name": "Parser", "passes": [
{}]},
{"user": {"duration":   0.0050, "percentage":  15.6}, "wall": {"duration":   0.0030, "percentage":  23.1}, "name": "'func.func' Pipeline", "passes": [
  {"user": {"duration":   0.0020, "percentage":  12.1}, "wall": {"duration":   0.0015, "percentage":  11.5}, "name": "Canonicalizer", "passes": [
  {}]},
  {"user": {"duration":   0.0010, "percentage":   1.7}, "wall": {"duration":   0.0011, "percentage":   8.5}, "name": "CSE", "passes": [
    {"user": {"duration":   0.0002, "percentage":   0.1}, "wall": {"duration":   0.0002, "percentage":   1.5}, "name": "(A) DominanceInfo", "passes": [
    {}]},
  {}]},
{}]},
{"user": {"duration":   0.0010, "percentage":   7.7}, "wall": {"duration":   0.0010, "percentage":   7.7}, "name": "Canonicalizer", "passes": [
{}]},
{"user": {"duration":   0.0020, "percentage":  11.9}, "wall": {"duration":   0.0020, "percentage":  15.4}, "name": "Output", "passes": [
{}]},
{"user": {"duration":   0.0010, "percentage":   8.8}, "wall": {"duration":   0.0010, "percentage":   7.7}, "name": "Rest"},
{"user": {"duration":   0.0160, "percentage": 100.0}, "wall": {"duration":   0.0130, "percentage": 100.0}, "name": "Total"}
])";

struct Range {
  std::string name;
  std::int64_t begin_us, end_us;
  bool operator==(const Range& o) const {
    return name == o.name && begin_us == o.begin_us && end_us == o.end_us;
  }
};

std::vector<Range> read(const std::string& text, Status* status = nullptr) {
  testing::CaptureSink sink;
  auto in = readers::ByteSource::from_memory(text, "timing");
  const Status s = readers::read_mlir_timing(*in, sink);
  if (status != nullptr) *status = s;
  if (status == nullptr) REQUIRE(s.ok());
  std::vector<Range> out;
  std::int64_t origin = INT64_MAX;
  for (const auto& e : sink.events()) origin = std::min(origin, e.begin_ns);
  for (const auto& e : sink.events()) {
    CHECK(e.type == EventType::kRange);
    out.push_back({e.name, (e.begin_ns - origin) / 1000, (e.end_ns - origin) / 1000});
  }
  std::sort(out.begin(), out.end(), [](const Range& a, const Range& b) {
    return a.begin_us != b.begin_us ? a.begin_us < b.begin_us : a.end_us > b.end_us;
  });
  return out;
}

// Microseconds from the start: each pass after the one before it, inside its parent.
const std::vector<Range> kExpected = {
    {"MLIR pass pipeline (total)", 0, 13000},
    {"Parser", 0, 4000},
    {"'func.func' Pipeline", 4000, 7000},
    {"Canonicalizer", 4000, 5500},
    {"CSE", 5500, 6600},
    {"(A) DominanceInfo", 5500, 5700},
    {"Canonicalizer", 7000, 8000},
    {"Output", 8000, 10000},
    {"Rest", 10000, 11000},
};

TEST_CASE("the tree display's text: wall times, nested by indentation, end to end") {
  CHECK(read(kTree) == kExpected);
}

TEST_CASE("the JSON gives the same trace as the text") { CHECK(read(kJson) == kExpected); }

TEST_CASE("a parent is at least as long as its children, the total at least the sum") {
  // MLIR rounds each figure: children may add up past their parent.
  std::string text = kTree;
  text.replace(text.find("0.0030 ( 23.1%)"), 15, "0.0020 ( 23.1%)");
  text.replace(text.find("0.0130 (100.0%)  Total"), 15, "0.0100 (100.0%)");
  const std::vector<Range> r = read(text);
  CHECK(r[0] == Range{"MLIR pass pipeline (total)", 0, 10600});  // 4 + 2.6 + 1 + 2 + 1 ms
  CHECK(r[2] == Range{"'func.func' Pipeline", 4000, 6600});
}

TEST_CASE("times are read from their text exactly, in both forms") {
  // Nanoseconds come from the digits, never a double; more decimals than MLIR's four are kept.
  std::string text = kTree, json = kJson;
  text.replace(text.find("  0.0002 (  1.5%)"), 17, "0.00023457 (1.5%)");  // the same width
  json.replace(json.find("\"wall\": {\"duration\":   0.0002"), 29,
               "\"wall\": {\"duration\": 2.3457e-4");
  for (const std::string& form : {text, json}) {
    testing::CaptureSink sink;
    auto in = readers::ByteSource::from_memory(form, "timing");
    const Status s = readers::read_mlir_timing(*in, sink);
    INFO(s.message());
    REQUIRE(s.ok());
    int found = 0;
    for (const auto& e : sink.events()) {
      if (e.name != "(A) DominanceInfo") continue;
      ++found;
      CHECK(e.end_ns - e.begin_ns == 234570);
    }
    CHECK(found == 1);
  }
  std::string negative = kJson;
  negative.replace(negative.find("\"wall\": {\"duration\":   0.0002"), 29,
                   "\"wall\": {\"duration\":  -0.0002");
  Status s;
  read(negative, &s);
  CHECK(s.message().find("expected a duration of 0 seconds or more") != std::string::npos);
}

TEST_CASE("found by its content, through the entry point of every trace file") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gpuprobe_mlir_" + std::to_string(getpid()) + ".json"))
                               .string();
  for (const char* form : {kTree, kJson}) {
    std::ofstream(path) << form;
    testing::CaptureSink sink;
    readers::TraceFormat format = readers::TraceFormat::kChrome;
    REQUIRE(readers::read_trace_file(path, sink, {}, &format).ok());
    CHECK(format == readers::TraceFormat::kMlirTiming);
    CHECK(sink.events().size() == kExpected.size());
    CHECK(sink.info().process_name == "MLIR pass timing");
    CHECK(sink.events()[0].category != Category::kCompile);  // never counted as torch compiles
  }
  std::filesystem::remove(path);
}

TEST_CASE("damaged or foreign input: one error naming where") {
  Status s;
  std::string bad = kTree;
  bad.replace(bad.find("0.0015 ( 11.5%)"), 6, "0.00x5");
  read(bad, &s);
  CHECK(s.message() ==
        "timing: line 9: expected a time in seconds and its share, \"0.0012 ( 3.4%)\"");
  std::string deep = kTree;
  deep.replace(deep.find("  Parser"), 8, "      Parser");  // two levels below nothing
  read(deep, &s);
  CHECK(s.message().find("line 7: expected a pass nested at most one level") != std::string::npos);
  read("===---\nno table here\n", &s);
  CHECK(s.message().find("its \"----Name----\" header") != std::string::npos);
  std::string list = kTree;
  list.replace(list.find("  Parser"), 8, "  root  ");
  read(list, &s);
  CHECK(s.message().find("the tree display") != std::string::npos);
  std::string json = kJson;
  json.resize(json.size() / 2);  // cut
  read(json, &s);
  CHECK(!s.ok());
  CHECK(s.message().rfind("timing: byte ", 0) == 0);
}

}  // namespace
}  // namespace gpuprobe
