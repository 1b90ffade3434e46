// The same range as BM_Range* in range_bench.cc, in a file compiled with GPUPROBE_DISABLE.
#include <benchmark/benchmark.h>

#include "gpuprobe/gpuprobe.hpp"

namespace {

void BM_Range_CompiledOut(benchmark::State& state) {
  for (auto _ : state) {
    GPUPROBE_RANGE("bench_range");
  }
}
BENCHMARK(BM_Range_CompiledOut);

}  // namespace
