#!/usr/bin/env bash
# Builds and runs the benchmarks (plain RelWithDebInfo build) and prints each case with its
# ratio to the floor measured in the same run. Extra arguments go to the benchmark binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target range_bench >/dev/null
out=build/bench.json
# Repetitions interleaved at random across cases, so that no case always runs after another.
build/bench/range_bench --benchmark_repetitions=6 --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$out" --benchmark_out_format=json "$@"
python3 bench/summarize.py "$out"
