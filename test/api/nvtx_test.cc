// Each gpuprobe range is also an NVTX range in the domain "gpuprobe", with the call site's name
// and color, as a real NVTX tool (here a recorder injected like Nsight) receives it.
#include <dlfcn.h>

#include <string>

#include "gpuprobe/gpuprobe.hpp"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

std::string recorder_log() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  REQUIRE(path != nullptr);
  void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(handle != nullptr);  // NVTX loaded it when gpuprobe made its first NVTX call
  const auto log = reinterpret_cast<const char* (*)()>(dlsym(handle, "nvtx_recorder_log"));
  REQUIRE(log != nullptr);
  const std::string out = log();
  dlclose(handle);
  return out;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

TEST_CASE("Ranges and instants reach an NVTX tool; nvtx=off stops them") {
  {
    Session session("");
    REQUIRE(session.ok());
    GPUPROBE_RANGE("nvtx_outer");
    { ScopedRange inner(std::string_view("nvtx_dynamic")); }
    GPUPROBE_INSTANT("nvtx_mark");
  }
  {
    Session quiet("nvtx=off");
    GPUPROBE_RANGE("nvtx_hidden");
  }
  const std::string log = recorder_log();
  INFO(log);
  REQUIRE(count(log, "push gpuprobe nvtx_outer color=") == 1);
  REQUIRE(count(log, "push gpuprobe nvtx_dynamic color=") == 1);
  REQUIRE(count(log, "mark gpuprobe nvtx_mark color=") == 1);
  REQUIRE(count(log, "pop gpuprobe") == 2);
  REQUIRE(count(log, "nvtx_hidden") == 0);
  // The color is the call site's, so Nsight and gpuprobe's viewers agree.
  REQUIRE(log.find("color=0") == std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
