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
  CHECK(out.text() ==
        "# HELP gpuprobe_events_total Events delivered.\n"
        "# TYPE gpuprobe_events_total counter\n"
        "gpuprobe_events_total 42\n"
        "gpuprobe_events_total{kind=\"range\",thread=\"7\"} 0.25\n");
}

TEST_CASE("label values and help text are escaped as the format says") {
  TextExposition out;
  out.family("m", "gauge", "a \\ and a\nnewline, \"quotes\" kept");
  out.sample("m", {{"name", "say \"hi\"\\now\nthen"}}, 1);
  CHECK(out.text() ==
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
  CHECK(out.text() == "a +Inf\nb -Inf\nc NaN\nd 0.1\ne 1e-05\n");
}

}  // namespace
}  // namespace gpuprobe::metrics
