#include <gpuprobe/gpuprobe.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  gpuprobe::Session session(std::string("chrome=") + argv[1]);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.error().c_str());
    return 1;
  }
  { GPUPROBE_RANGE("consumer_range"); }
  return session.stop().ok() ? 0 : 1;
}
