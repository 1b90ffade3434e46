#!/usr/bin/env bash
# Builds the trace readers' libFuzzer targets with Clang, AddressSanitizer and UBSan, and runs
# each for a bounded time from the seeds in fuzz/corpus/ (plus what earlier runs found, kept in
# build-fuzz/corpus/). Exits non-zero if a target finds a crash, a leak or a hang.
#   fuzz/run.sh [SECONDS per target, default 45]
# FUZZ_SEED and FUZZ_RUNS (inputs per target; the file target, ten times slower, runs a fifth)
# make a run repeatable — the test command uses them, so CI explores the same inputs each time
# instead of failing at random on what a longer search finds.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-45}
dir=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUPROBE_BUILD_FUZZERS=ON -DGPUPROBE_BUILD_TESTS=OFF -DGPUPROBE_BUILD_BENCHMARKS=OFF \
  -DGPUPROBE_BUILD_EXAMPLES=OFF -DGPUPROBE_BUILD_TOOLS=OFF -DGPUPROBE_CUPTI=OFF \
  -DGPUPROBE_SANITIZE=address+undefined >/dev/null || exit 1
cmake --build "$dir" || exit 1
status=0
for target in chrome_reader_fuzzer perfetto_reader_fuzzer flight_window_reader_fuzzer trace_file_fuzzer \
    pickle_fuzzer; do
  case $target in
    chrome*) seeds=fuzz/corpus/chrome ;;
    perfetto*) seeds=fuzz/corpus/perfetto ;;
    flight*) seeds=fuzz/corpus/flight_window ;;
    pickle*) seeds=fuzz/corpus/pickle ;;
    *) seeds="fuzz/corpus/chrome fuzz/corpus/perfetto fuzz/corpus/flight_window fuzz/corpus/mlir_timing" ;;
  esac
  work="$dir/corpus/$target"
  mkdir -p "$work" "$dir/artifacts"
  echo "=== fuzz: $target for ${seconds}s"
  # -timeout: an input taking over 10 s counts as a hang; -rss_limit_mb: memory must stay bounded.
  repeat=()
  if [ -n "${FUZZ_SEED:-}" ]; then repeat+=(-seed="$FUZZ_SEED"); fi
  if [ -n "${FUZZ_RUNS:-}" ]; then
    runs=$FUZZ_RUNS
    [ "$target" = trace_file_fuzzer ] && runs=$((FUZZ_RUNS / 5))
    repeat+=(-runs="$runs")
    rm -rf "$work" && mkdir -p "$work"  # the same starting corpus every time
  fi
  if ! "$dir/fuzz/$target" "$work" $seeds -max_total_time="$seconds" -timeout=10 "${repeat[@]}" \
        -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$dir/artifacts/$target-" \
        -print_final_stats=1 2>"$dir/$target.log"; then
    echo "=== fuzz: $target FAILED (input saved under $dir/artifacts/):"
    tail -40 "$dir/$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$dir/$target.log" | tail -2
    echo "=== fuzz: $target passed"
  fi
done
exit $status
