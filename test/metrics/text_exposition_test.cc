// The Prometheus text format as gpuprobe writes it: families, samples, escaping, special values.
#include "metrics/text_exposition.h"

#include "support/catch.hpp"

namespace gpuprobe::metrics {
namespace {

TEST_CASE("a family is its HELP and TYPE lines, then its samples") {
  TextExposition out;
  out.family("gpuprobe_events_total", "counter", "Events delivered.");
  out.sample("gpuprobe_events_total", {}, 42);
  out.sample("gpuprobe_events_total", {{"kind", "range"}, {"thread", "7"}}, 0.25);
  CHECK(out.finish() ==
        "# HELP gpuprobe_events_total Events delivered.\n"
        "# TYPE gpuprobe_events_total counter\n"
        "gpuprobe_events_total 42\n"
        "gpuprobe_events_total{kind=\"range\",thread=\"7\"} 0.25\n");
}

TEST_CASE("label values and help text are escaped as the format says") {
  TextExposition out;
  out.family("m", "gauge", "a \\ and a\nnewline, \"quotes\" kept");
  out.sample("m", {{"name", "say \"hi\"\\now\nthen"}}, 1);
  CHECK(out.finish() ==
        "# HELP m a \\\\ and a\\nnewline, \"quotes\" kept\n"
        "# TYPE m gauge\n"
        "m{name=\"say \\\"hi\\\"\\\\now\\nthen\"} 1\n");
}

TEST_CASE("infinities and NaN are written as Prometheus reads them; other values exactly") {
  TextExposition out;
  out.sample("a", {}, 1.0 / 0.0);
  out.sample("b", {}, -1.0 / 0.0);
  out.sample("c", {}, 0.0 / 0.0);
  out.sample("d", {}, 0.1);
  out.sample("e", {}, 1e-5);
  CHECK(out.finish() == "a +Inf\nb -Inf\nc NaN\nd 0.1\ne 1e-05\n");
}

TEST_CASE("OpenMetrics: a counter family without _total, exemplars, and the end marker") {
  TextExposition out(TextFormat::kOpenMetrics);
  CHECK(out.content_type() == "application/openmetrics-text; version=1.0.0; charset=utf-8");
  out.family("gpuprobe_events_total", "counter", "Events.");
  out.sample("gpuprobe_events_total", {}, 3);
  out.family("d_seconds", "histogram", "D.");
  const Exemplar ex{0.0042, 1700000000123456789, 77};
  out.sample("d_seconds_bucket", {{"le", "0.005"}}, 1, &ex);
  out.sample("d_seconds_count", {}, 1);
  CHECK(out.finish() ==
        "# HELP gpuprobe_events Events.\n"
        "# TYPE gpuprobe_events counter\n"
        "gpuprobe_events_total 3\n"
        "# HELP d_seconds D.\n"
        "# TYPE d_seconds histogram\n"
        "d_seconds_bucket{le=\"0.005\"} 1 # {tid=\"77\"} 0.0042 1700000000.123456\n"
        "d_seconds_count 1\n"
        "# EOF\n");
}

TEST_CASE("the 0.0.4 format leaves exemplars out; the Accept header picks the format") {
  TextExposition out;
  const Exemplar ex{0.0042, 1700000000123456789, 77};
  out.sample("d_seconds_bucket", {{"le", "0.005"}}, 1, &ex);
  CHECK(out.finish() == "d_seconds_bucket{le=\"0.005\"} 1\n");
  // What Prometheus 2.42 sends.
  CHECK(TextExposition::negotiate("application/openmetrics-text;version=1.0.0,application/"
                                  "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                                  "q=0.5,*/*;q=0.1") == TextFormat::kOpenMetrics);
  CHECK(TextExposition::negotiate("text/plain") == TextFormat::kPrometheus);
  CHECK(TextExposition::negotiate("") == TextFormat::kPrometheus);
}

}  // namespace
}  // namespace gpuprobe::metrics
