// The README's "Config keys" block is Session::help() word for word: generated from the
// components' option tables as the session puts them together, and this test fails when the two
// part. To regenerate it after changing an option: GPUPROBE_UPDATE_README=1 readme_options_test,
// then review the README's diff.
#include <cstdlib>
#include <fstream>
#include <string>

#include "gpuprobe/session.hpp"
#include "support/catch.hpp"
#include "support/strings.h"

namespace gpuprobe {
namespace {

constexpr const char* kHeading = "### Config keys\n";
constexpr const char* kFence = "```\n";

// `text` without its "  nvtx=" line, whose help says whether the build has NVTX headers.
std::string without_nvtx_line(std::string text) {
  const std::size_t at = text.find("\n  nvtx=");
  if (at != std::string::npos) text.erase(at + 1, text.find('\n', at + 1) - at);
  return text;
}

TEST_CASE("The README's config keys are Session::help()") {
  const std::string path = GPUPROBE_README;
  std::string readme = testing::read_file(path);
  const std::size_t heading = readme.find(kHeading);
  REQUIRE(heading != std::string::npos);
  const std::size_t begin = readme.find(kFence, heading);
  REQUIRE(begin != std::string::npos);
  const std::size_t first = begin + std::string(kFence).size();
  const std::size_t end = readme.find(kFence, first);
  REQUIRE(end != std::string::npos);
  const std::string help = Session::help();
  if (const char* update = std::getenv("GPUPROBE_UPDATE_README"); update && *update == '1') {
    readme.replace(first, end - first, help);
    std::ofstream(path, std::ios::binary) << readme;
    return;
  }
  std::string shown = readme.substr(first, end - first);
  std::string expected = help;
  if (testing::contains(help, "this build has no NVTX headers")) {
    shown = without_nvtx_line(shown);
    expected = without_nvtx_line(expected);
  }
  INFO("regenerate with GPUPROBE_UPDATE_README=1 " << path);
  CHECK(shown == expected);
}

}  // namespace
}  // namespace gpuprobe
