// `metrics_file=PATH` in a real session: the file is there from the start, holds the ranges
// recorded, and is what Prometheus's own checker (promtool, when installed) accepts.
#include "metrics/metrics_file_sink.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpuprobe/gpuprobe.hpp"
#include "gpuprobe/session.hpp"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

TEST_CASE("a session's metrics file holds its ranges, and promtool accepts it") {
  const std::string path = "/tmp/gpuprobe_metrics_test_" + std::to_string(getpid()) + ".prom";
  {
    Session session("metrics_file=" + path);
    REQUIRE(session.ok());
    // Written when the session starts, so that a scraper finds it at once.
    CHECK(testing::read_file(path).find("# TYPE gpuprobe_range_duration_seconds histogram") !=
          std::string::npos);
    for (int i = 0; i < 100; ++i) {
      GPUPROBE_RANGE("request");
      { GPUPROBE_RANGE("decode \"quoted\""); }
    }
    REQUIRE(session.stop().ok());
  }
  const std::string text = testing::read_file(path);
  CAPTURE(text);
  CHECK(text.find("gpuprobe_range_duration_seconds_count{name=\"request\"} 100\n") !=
        std::string::npos);
  CHECK(text.find("gpuprobe_range_duration_seconds_count{name=\"decode \\\"quoted\\\"\"} 100\n") !=
        std::string::npos);
  CHECK(text.find("gpuprobe_events_dropped_total 0\n") != std::string::npos);
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    WARN("skipped: promtool not installed (Debian package prometheus)");
  } else {
    const std::string check = "promtool check metrics < " + path + " > /dev/null";
    CHECK(std::system(check.c_str()) == 0);
  }
  std::remove(path.c_str());
}

TEST_CASE("a metrics file that cannot be written fails the session's start, with the path") {
  Session session("metrics_file=/nonexistent-dir/m.prom");
  CHECK_FALSE(session.ok());
}

TEST_CASE("metrics_ranges= and metrics_names= reach the session's metrics; the rings' memory") {
  const std::string path = "/tmp/gpuprobe_metrics_sel_" + std::to_string(getpid()) + ".prom";
  {
    Session session("metrics_file=" + path + ",metrics_ranges=request+decode,metrics_names=1");
    REQUIRE(session.ok());
    for (int i = 0; i < 10; ++i) {
      GPUPROBE_RANGE("request");
      { GPUPROBE_RANGE("decode"); }
      { GPUPROBE_RANGE("not exported"); }
    }
    REQUIRE(session.stop().ok());
  }
  const std::string text = testing::read_file(path);
  std::remove(path.c_str());
  CAPTURE(text);
  // request+decode selected, one name allowed: "decode" ends first, so it is the one kept.
  CHECK(testing::has_line(text, "gpuprobe_range_duration_seconds_count{name=\"decode\"} 10"));
  CHECK(text.find("name=\"request\"") == std::string::npos);
  CHECK(text.find("not exported") == std::string::npos);
  CHECK(testing::has_line(text, "gpuprobe_range_names_overflowed_total 10"));
  CHECK(text.find("gpuprobe_memory_bytes{part=\"rings\"} ") != std::string::npos);
  CHECK_FALSE(testing::has_line(text, "gpuprobe_memory_bytes{part=\"rings\"} 0"));
  CHECK(text.find("part=\"flight\"") == std::string::npos);  // no flight recorder here
}

}  // namespace
}  // namespace gpuprobe
