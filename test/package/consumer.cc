#include <gpuprobe/gpuprobe.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  // GPU activity is asked for; without a GPU, a driver or CUPTI support the session says why and
  // records CPU events.
  gpuprobe::Session session(std::string("chrome=") + argv[1] + ",cupti=all");
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.error().c_str());
    return 1;
  }
  { GPUPROBE_RANGE("consumer_range"); }
  return session.stop().ok() ? 0 : 1;
}
