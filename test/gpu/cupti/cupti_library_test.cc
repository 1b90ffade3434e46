// Loading libcupti fails cleanly, with a reason, when there is no library, a wrong library or no
// CUDA device; a session then records CPU events and says "CUPTI unavailable" once.
#include "gpu/cupti/cupti_library.h"

#include <dlfcn.h>

#include <memory>
#include <string>

#include "gpuprobe/gpuprobe.hpp"
#include "support/capture_sink.h"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe::cupti {
namespace {

using testing::contains;
TEST_CASE("A missing libcupti is named in the error") {
  CuptiLibrary lib;
  const Status s = CuptiLibrary::open("/nonexistent/libcupti.so", &lib);
  REQUIRE_FALSE(s.ok());
  REQUIRE(contains(s.message(), "/nonexistent/libcupti.so"));
}

TEST_CASE("A library that is not libcupti is rejected by the first missing symbol") {
  CuptiLibrary lib;
  const Status s = CuptiLibrary::open("libz.so.1", &lib);
  REQUIRE_FALSE(s.ok());
  REQUIRE(
      contains(s.message(), "libz.so.1 is not a usable libcupti (no symbol cuptiActivityEnable"));
}

TEST_CASE("The usual search finds libcupti, or says it did not; without a GPU it stops there") {
  CuptiLibrary lib;
  const Status s = CuptiLibrary::open("", &lib);
  if (s.ok()) {
    WARN("skipped: this machine has a CUDA device; test/gpu covers it");
    return;
  }
  INFO(s.message());
  REQUIRE((contains(s.message(), "libcupti not found") || contains(s.message(), "no CUDA driver") ||
           contains(s.message(), "no CUDA device")));
}

TEST_CASE("A libcupti the process has loaded already is used, not a second copy") {
  // torch links its own libcupti; loading the toolkit's beside it makes two CUPTIs in one process.
  std::string found;
  for (const char* path :
       {"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"}) {
    if (void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
      found = path;
      static_cast<void>(h);  // kept loaded, as torch's would be
      break;
    }
  }
  if (found.empty()) {
    WARN("skipped: no libcupti on this machine to preload (the GPU machine runs this)");
    return;
  }
  CuptiLibrary lib;
  static_cast<void>(CuptiLibrary::open("", &lib));  // without a GPU it stops at the driver
  INFO("preloaded " << found << ", opened " << lib.path());
  REQUIRE(contains(lib.path(), "already loaded in this process"));
}

TEST_CASE("Without CUPTI a session says so once and records CPU events") {
  const CuptiLibrary* lib = nullptr;
  if (CuptiLibrary::get(&lib).ok()) {
    WARN("skipped: CUPTI is available here; test/gpu covers it");
    return;
  }
  auto sink = std::make_shared<testing::CaptureSink>();
  Session session("cupti=all", {sink});
  REQUIRE(session.ok());
  REQUIRE(session.running());
  { GPUPROBE_RANGE("cpu_only"); }
  REQUIRE(session.stop().ok());
  REQUIRE(sink->named("cpu_only").size() == 1);
  REQUIRE(sink->gpu().empty());
  const Stats stats = session.stats();
  REQUIRE(stats.gpu.status.rfind("CUPTI unavailable: ", 0) == 0);
  REQUIRE(stats.gpu.records == 0);
}

}  // namespace
}  // namespace gpuprobe::cupti
