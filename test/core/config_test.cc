#include "core/config.h"

#include <string>

#include "core/categories.h"
#include "core/clock.h"
#include "core/gpu_source.h"
#include "gpuprobe/range.hpp"
#include "gpuprobe/session.hpp"
#include "session/builtin_sinks.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe::core {
namespace {

using testing::contains;

// What a Session does before it parses its config: the built-in sinks' keys exist.
const bool kBuiltinSinks = (session::register_builtin_sinks(), true);

TEST_CASE("An empty config keeps every default") {
  Config c;
  REQUIRE(parse_config("", &c).ok());
  REQUIRE(c.sinks.empty());
  REQUIRE(c.ring_capacity == 32768);
  REQUIRE(c.flush_ms == 20);
  REQUIRE(c.nvtx);
  REQUIRE(c.clock == ClockChoice::kAuto);
  REQUIRE_FALSE(c.categories.has_value());
}

TEST_CASE("cupti_api= chooses callbacks (the default) or CUPTI's API activity records") {
  Config c;
  REQUIRE(c.gpu_api_callbacks);
  REQUIRE(parse_config("cupti_api=activity", &c).ok());
  REQUIRE_FALSE(c.gpu_api_callbacks);
  REQUIRE(parse_config("cupti_api=callbacks", &c).ok());
  REQUIRE(c.gpu_api_callbacks);
  const Status bad = parse_config("cupti_api=records", &c);
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.message().find("callbacks or activity") != std::string::npos);
}

TEST_CASE("cupti= takes kinds, all, and all_api (every runtime and driver call)") {
  Config c;
  REQUIRE(parse_config("cupti=all", &c).ok());
  REQUIRE(c.gpu_kinds == kAllGpuKinds);
  REQUIRE_FALSE(c.gpu_all_api);
  REQUIRE(parse_config("cupti=kernel+runtime", &c).ok());
  REQUIRE(c.gpu_kinds ==
          (gpu_kind_bit(GpuActivityKind::kKernel) | gpu_kind_bit(GpuActivityKind::kRuntimeApi)));
  REQUIRE_FALSE(c.gpu_all_api);
  REQUIRE(parse_config("cupti=all+all_api", &c).ok());
  REQUIRE(c.gpu_kinds == kAllGpuKinds);
  REQUIRE(c.gpu_all_api);
  // all_api brings the API kinds it widens.
  Config k;
  REQUIRE(parse_config("cupti=kernel+all_api", &k).ok());
  REQUIRE(k.gpu_all_api);
  REQUIRE(k.gpu_kinds ==
          (gpu_kind_bit(GpuActivityKind::kKernel) | gpu_kind_bit(GpuActivityKind::kRuntimeApi) |
           gpu_kind_bit(GpuActivityKind::kDriverApi)));
}

TEST_CASE("Good config strings set what they name") {
  Config c;
  REQUIRE(parse_config(" chrome=a.json , ring=1000,flush_ms=5,nvtx=off,clock=monotonic,"
                       "categories=app+gc,rank=3,world_size=8,names=10,chrome=b.json.gz,",
                       &c)
              .ok());
  REQUIRE(c.sinks.size() == 2);
  REQUIRE(c.sinks[0].key == "chrome");
  REQUIRE(c.sinks[0].value == "a.json");
  REQUIRE(c.sinks[1].value == "b.json.gz");
  REQUIRE(c.ring_capacity == 1024);  // rounded up to a power of two
  REQUIRE(c.flush_ms == 5);
  REQUIRE_FALSE(c.nvtx);
  REQUIRE(c.clock == ClockChoice::kMonotonic);
  REQUIRE(c.categories == ((1u << 0) | (1u << 5)));
  REQUIRE(c.rank == 3);
  REQUIRE(c.world_size == 8);
  REQUIRE(c.max_names == 10);
}

TEST_CASE("categories=all enables every category") {
  Config c;
  REQUIRE(parse_config("categories=all", &c).ok());
  REQUIRE(c.categories == kAllCategories);
}

TEST_CASE("Bad config strings fail with a message naming the key and value") {
  struct Case {
    const char* config;
    const char* must_mention;
  };
  const Case cases[] = {
      {"bogus=1", "'bogus'"},
      {"chrome", "'chrome' has no '='"},
      {"chrome=", "'chrome' needs a value"},
      {"ring=abc", "'ring': 'abc'"},
      {"ring=0", "'ring': '0'"},
      {"ring=99999999999", "'ring'"},
      {"ring=-5", "'-5'"},
      {"flush_ms=0", "'flush_ms'"},
      {"nvtx=maybe", "'nvtx': 'maybe'"},
      {"clock=sundial", "'clock': 'sundial'"},
      {"categories=app+nope", "'nope'"},
      {"rank=x", "'rank': 'x'"},
      {"names=0", "'names'"},
      {"ring=1024,ring=2048", "'ring' is given twice"},
      {"categories=", "'categories' needs at least one name"},
      {"cupti=", "'cupti' needs at least one name"},
  };
  for (const Case& k : cases) {
    Config c;
    const Status s = parse_config(k.config, &c);
    INFO(k.config << " -> " << s.message());
    REQUIRE_FALSE(s.ok());
    REQUIRE(contains(s.message(), k.must_mention));
  }
  // A NUL would cut a path short; a megabyte of input is echoed as 80 bytes and a length.
  Config c;
  const Status nul = parse_config(std::string_view("chrome=a.json\0.evil", 20), &c);
  REQUIRE_FALSE(nul.ok());
  REQUIRE(contains(nul.message(), "NUL"));
  const Status huge = parse_config("ring=" + std::string(1 << 20, '9'), &c);
  REQUIRE_FALSE(huge.ok());
  REQUIRE(huge.message().size() < 300);
  REQUIRE(contains(huge.message(), "(1048576 bytes)"));
}

TEST_CASE("Named user categories are usable in config strings") {
  REQUIRE(gpuprobe::name_category(Category::kUser3, "io"));
  REQUIRE_FALSE(gpuprobe::name_category(Category::kUser4, "io"));    // taken
  REQUIRE_FALSE(gpuprobe::name_category(Category::kGc, "renamed"));  // built-ins keep their names
  REQUIRE_FALSE(gpuprobe::name_category(Category::kUser5, "a,b"));   // would break config strings
  Config c;
  REQUIRE(parse_config("categories=io+app", &c).ok());
  REQUIRE(c.categories == ((1u << 27) | 1u));
  REQUIRE(category_name(Category::kUser3) == "io");
}

TEST_CASE("help() lists every option and sink from the one table") {
  const std::string help = Session::help();
  for (const char* key : {"chrome=PATH", "ring=", "flush_ms=", "nvtx=", "clock=", "categories=",
                          "rank=", "world_size=", "names=", "GPUPROBE"}) {
    INFO(key);
    REQUIRE(contains(help, key));
  }
}

}  // namespace
}  // namespace gpuprobe::core
