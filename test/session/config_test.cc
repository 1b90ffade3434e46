// The session's config: every component's option table, put together (session_config.h).
#include "session/session_config.h"

#include <csignal>
#include <string>
#include <vector>

#include "base/option_values.h"
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
using Config = session::SessionConfig;
using base::parse_duration;
using flight::TriggerSpec;
using session::parse_config;

// Each config is refused.
void check_refused(std::initializer_list<const char*> configs) {
  for (const char* bad : configs) {
    CAPTURE(bad);
    Config e;
    CHECK_FALSE(parse_config(bad, &e).ok());
  }
}

// The config is refused with a message that names `fix`.
void check_refused_naming(const char* config, const char* fix) {
  Config e;
  const Status s = parse_config(config, &e);
  REQUIRE_FALSE(s.ok());
  CHECK(contains(s.message(), fix));
}

// What a Session does before it parses its config: the built-in sinks' keys exist.
const bool kBuiltinSinks = (session::register_builtin_sinks(), true);

TEST_CASE("An empty config keeps every default") {
  Config c;
  REQUIRE(parse_config("", &c).ok());
  REQUIRE(c.sinks.empty());
  REQUIRE(c.recording.ring_capacity == 32768);
  REQUIRE(c.recording.flush_ms == 20);
  REQUIRE(c.recording.nvtx);
  REQUIRE(c.recording.clock == ClockChoice::kAuto);
  REQUIRE_FALSE(c.recording.categories.has_value());
}

TEST_CASE("cupti_api= chooses callbacks (the default) or CUPTI's API activity records") {
  Config c;
  REQUIRE(c.gpu.api_callbacks);
  REQUIRE(parse_config("cupti_api=activity", &c).ok());
  REQUIRE_FALSE(c.gpu.api_callbacks);
  REQUIRE(parse_config("cupti_api=callbacks", &c).ok());
  REQUIRE(c.gpu.api_callbacks);
  const Status bad = parse_config("cupti_api=records", &c);
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.message().find("callbacks or activity") != std::string::npos);
}

TEST_CASE("cupti_start= is session (the default) or cuda, which sampling bursts cannot use") {
  Config c;
  REQUIRE_FALSE(c.gpu.start_at_cuda_init);
  REQUIRE(parse_config("cupti=all,cupti_start=cuda", &c).ok());
  REQUIRE(c.gpu.start_at_cuda_init);
  REQUIRE(parse_config("cupti_start=session", &c).ok());
  REQUIRE_FALSE(c.gpu.start_at_cuda_init);
  const Status bad = parse_config("cupti_start=later", &c);
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.message().find("session or cuda") != std::string::npos);
  const Status bursts = parse_config("cupti=kernel,cupti_start=cuda,gpu_burst=1s/60s", &c);
  REQUIRE_FALSE(bursts.ok());
  REQUIRE(bursts.message().find("cupti_start=session") != std::string::npos);
}

TEST_CASE("cupti= takes kinds, all, and all_api (every runtime and driver call)") {
  Config c;
  REQUIRE(parse_config("cupti=all", &c).ok());
  REQUIRE(c.gpu.kinds == kAllGpuKinds);
  REQUIRE_FALSE(c.gpu.all_api);
  REQUIRE(parse_config("cupti=kernel+runtime", &c).ok());
  REQUIRE(c.gpu.kinds ==
          (gpu_kind_bit(GpuActivityKind::kKernel) | gpu_kind_bit(GpuActivityKind::kRuntimeApi)));
  REQUIRE_FALSE(c.gpu.all_api);
  REQUIRE(parse_config("cupti=all+all_api", &c).ok());
  REQUIRE(c.gpu.kinds == kAllGpuKinds);
  REQUIRE(c.gpu.all_api);
  // all_api brings the API kinds it widens.
  Config k;
  REQUIRE(parse_config("cupti=kernel+all_api", &k).ok());
  REQUIRE(k.gpu.all_api);
  REQUIRE(k.gpu.kinds ==
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
  REQUIRE(c.recording.ring_capacity == 1024);  // rounded up to a power of two
  REQUIRE(c.recording.flush_ms == 5);
  REQUIRE_FALSE(c.recording.nvtx);
  REQUIRE(c.recording.clock == ClockChoice::kMonotonic);
  REQUIRE(c.recording.categories == ((1u << 0) | (1u << 5)));
  REQUIRE(c.recording.rank == 3);
  REQUIRE(c.recording.world_size == 8);
  REQUIRE(c.recording.max_names == 10);
}

TEST_CASE("categories=all enables every category") {
  Config c;
  REQUIRE(parse_config("categories=all", &c).ok());
  REQUIRE(c.recording.categories == kAllCategories);
}

TEST_CASE("flight=, dump= and trigger= set the flight recorder; the two trigger forms parse") {
  Config c;
  REQUIRE(c.flight.seconds == 0);
  REQUIRE(parse_config("flight=30,flight_mb=16,dump=/tmp/d,dump_format=chrome,dump_after=500ms,"
                       "dump_cooldown=5m,dump_max_per_hour=3,dump_max_mb=10,"
                       "trigger=slow:request>200ms+p99:request>50ms/10s+p99.9:x>1s/1m+signal",
                       &c)
              .ok());
  CHECK(c.flight.seconds == 30);
  CHECK(c.flight.mb == 16);
  CHECK(c.flight.dir == "/tmp/d");
  CHECK(c.flight.formats == std::vector<std::string>{"chrome"});
  CHECK(c.flight.after_ns == 500'000'000);
  CHECK(c.flight.cooldown_ns == 300'000'000'000);
  CHECK(c.flight.max_per_hour == 3);
  CHECK(c.flight.max_mb == 10);
  REQUIRE(c.flight.triggers.size() == 4);
  const TriggerSpec& slow = c.flight.triggers[0];
  CHECK(slow.kind == TriggerSpec::Kind::kSlow);
  CHECK(slow.name == "request");
  CHECK(slow.threshold_ns == 200'000'000);
  const TriggerSpec& p99 = c.flight.triggers[1];
  CHECK(p99.kind == TriggerSpec::Kind::kPercentile);
  CHECK(p99.quantile == Approx(0.99));
  CHECK(p99.threshold_ns == 50'000'000);
  CHECK(p99.window_ns == 10'000'000'000);
  CHECK(c.flight.triggers[2].quantile == Approx(0.999));
  CHECK(c.flight.triggers[2].window_ns == 60'000'000'000);
  CHECK(c.flight.triggers[3].kind == TriggerSpec::Kind::kSignal);
  CHECK(c.flight.triggers[3].signal == SIGUSR2);

  Config d;
  REQUIRE(parse_config("flight=5", &d).ok());
  CHECK(d.flight.formats == std::vector<std::string>{"perfetto", "chrome"});
  CHECK(d.flight.triggers.empty());
  check_refused({"flight=0", "flight=5,trigger=slow:request", "flight=5,trigger=slow:request>200",
                 "flight=5,trigger=p99:request>50ms", "flight=5,trigger=p100:request>50ms/10s",
                 "flight=5,trigger=p99:request>50ms/10ms", "flight=5,trigger=fast:request>1ms",
                 "flight=5,trigger=signal:SIGKILL",
                 "flight=5,trigger=", "flight=5,dump_format=metrics", "flight=5,dump_format=nope",
                 "flight=5,dump_after=forever"});
  // The recorder's keys without the recorder are a mistake that names the fix.
  check_refused_naming("dump=/tmp/d,trigger=slow:a>1ms", "flight=SECONDS");
}

TEST_CASE("gpu_burst=ON/EVERY records GPU activity in bursts, and needs cupti=") {
  Config c;
  REQUIRE(c.gpu.burst_every_ns == 0);
  REQUIRE(parse_config("gpu_burst=1s/60s,cupti=all", &c).ok());  // in any order
  CHECK(c.gpu.burst_on_ns == 1'000'000'000);
  CHECK(c.gpu.burst_every_ns == 60'000'000'000);
  REQUIRE(parse_config("cupti=kernel,gpu_burst=250ms/2m", &c).ok());
  CHECK(c.gpu.burst_on_ns == 250'000'000);
  CHECK(c.gpu.burst_every_ns == 120'000'000'000);
  check_refused({"cupti=all,gpu_burst=1s", "cupti=all,gpu_burst=60s/1s",
                 "cupti=all,gpu_burst=1s/1s", "cupti=all,gpu_burst=5ms/1s",
                 "cupti=all,gpu_burst=1s/2d", "cupti=all,gpu_burst=/60s"});
  check_refused_naming("gpu_burst=1s/60s", "cupti=");
}

TEST_CASE("parse_duration takes a number and a unit, or the bare unit it is given") {
  std::int64_t ns = 0;
  REQUIRE(parse_duration("200ms", 0, &ns));
  CHECK(ns == 200'000'000);
  REQUIRE(parse_duration("1.5s", 0, &ns));
  CHECK(ns == 1'500'000'000);
  REQUIRE(parse_duration("250us", 0, &ns));
  CHECK(ns == 250'000);
  REQUIRE(parse_duration("2m", 0, &ns));
  CHECK(ns == 120'000'000'000);
  REQUIRE(parse_duration("3", 1'000'000'000, &ns));
  CHECK(ns == 3'000'000'000);
  for (const char* bad : {"", "ms", "3", "-1s", "1e3s", "1.2.3s", "5 ms", "10parsecs"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_duration(bad, 0, &ns));
  }
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
  REQUIRE(c.recording.categories == ((1u << 27) | 1u));
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
