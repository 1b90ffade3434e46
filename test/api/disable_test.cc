// With GPUPROBE_DISABLE every macro compiles to nothing: no call site, no record, even while a
// session records; the functions and classes stay usable.
#define GPUPROBE_DISABLE 1
#include "gpuprobe/gpuprobe.hpp"

#include <memory>

#include "support/capture_sink.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

int compiled_out_function() {
  GPUPROBE_FUNCTION();
  GPUPROBE_RANGE("compiled_out");
  GPUPROBE_RANGE_IN(Category::kGc, "compiled_out_gc");
  GPUPROBE_INSTANT("compiled_out_instant");
  GPUPROBE_COUNTER("compiled_out_counter", 1.0);
  return 42;
}

TEST_CASE("GPUPROBE_DISABLE compiles the macros away") {
  auto sink = std::make_shared<testing::CaptureSink>();
  Session session("", {sink});
  REQUIRE(compiled_out_function() == 42);
  { ScopedRange r(std::string_view("explicit_object")); }
  REQUIRE(session.stop().ok());
  const auto events = sink->events();
  REQUIRE(events.size() == 1);
  REQUIRE(events[0].name == "explicit_object");
}

}  // namespace
}  // namespace gpuprobe
