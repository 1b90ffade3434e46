#!/usr/bin/env bash
# Command 2 of the README: installs what is missing, then builds and runs every test three
# times — a plain build, under ThreadSanitizer, under AddressSanitizer + UBSan — and checks the
# outputs with the readers users open them with (Python tools from PyPI).
# Then fuzzes each trace reader for a bounded time (fuzz/run.sh).
#   scripts/test.sh [plain|thread|address+undefined|python|fuzz ...]   (default: all five)
# GPUPROBE_PRUNE_BUILDS=1 (.ci/run sets it) removes each sanitizer build tree once its tests have
# run: together they take ~6 GB, the virtual environment ~7 GB, and a CI machine's disk can be
# small. Left unset, the trees stay for quick rebuilds.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh || exit 1

# Say how much room there is up front, so that a run that runs out of disk says so plainly.
echo "=== disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free where the builds go"

configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(plain thread address+undefined python fuzz)

passed=0
failed=0
skips=0
# Python: the gpuprobe package (pip install ., built by scikit-build-core + pybind11) and the real
# readers of our formats, from PyPI, in a virtual environment kept in .venv/ (so only a fresh
# machine downloads them — torch, the CUDA build PyPI has, is several GB), against the plain build.
run_python_tests() {
  echo "=== python: the gpuprobe package and the readers from PyPI, in .venv"
  if [ ! -x .venv/bin/python ]; then python3 -m venv .venv || return 1; fi
  # --no-cache-dir: pip would otherwise keep a second copy of every wheel (~3 GB for torch's).
  # torchvision, timm, transformers: the third-party models of the zoo (test_model_zoo.py).
  .venv/bin/pip install -q --disable-pip-version-check --no-cache-dir pytest scikit-build-core pybind11 torch \
    traceinsight tensorboard xprof torch-tb-profiler jax tlparse torchvision timm transformers ||
    return 1
  .venv/bin/pip install -q --disable-pip-version-check --no-cache-dir --no-build-isolation . || return 1
  if [ ! -x build/examples/demo ] || [ ! -x build/gpuprobe ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build || return 1
  fi
  GPUPROBE_BUILD_DIR=build .venv/bin/python -m pytest -q -rs -p no:logging test/python 2>&1 | tee build/pytest.log
}

for config in "${configs[@]}"; do
  if [ "$config" = fuzz ]; then
    # The readers' targets, a fixed seed and input count (about 20 s each): a crash, leak, hang
    # or runaway memory fails the run, and the same inputs are tried on every machine.
    if FUZZ_SEED=1 FUZZ_RUNS=40000 fuzz/run.sh 90; then passed=$((passed + 5)); else failed=$((failed + 1)); fi
    continue
  fi
  if [ "$config" = python ]; then
    run_python_tests
    summary=$(tail -1 build/pytest.log 2>/dev/null)
    count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || echo 0; }
    p=$(count passed); f=$(count failed); e=$(count error); k=$(count skipped)
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; fi  # no result at all is a failure
    passed=$((passed + p)); failed=$((failed + f + e)); skips=$((skips + k))
    continue
  fi
  case "$config" in
    plain) dir=build sanitize="" ;;
    thread) dir=build-tsan sanitize=thread ;;
    address+undefined) dir=build-asan sanitize=address+undefined ;;
    *) echo "unknown configuration '$config'" >&2; exit 2 ;;
  esac
  echo "=== $config: building in $dir"
  # Benchmarks only in the plain build: sanitizers distort their numbers.
  bench=ON; [ -n "$sanitize" ] && bench=OFF
  if ! cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DGPUPROBE_SANITIZE="$sanitize" -DGPUPROBE_BUILD_BENCHMARKS=$bench >/dev/null ||
     ! cmake --build "$dir"; then
    echo "=== $config: build FAILED"
    failed=$((failed + 1))
    continue
  fi
  echo "=== $config: running tests"
  log="$dir/ctest.log"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/test/tsan_suppressions.txt" \
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1" \
    ctest --test-dir "$dir" --output-on-failure -j2 2>&1 | tee "$log"
  summary=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  total=$(echo "$summary" | sed -E 's/.* out of ([0-9]+).*/\1/')
  bad=$(echo "$summary" | sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/')
  skipped=$(grep -c -- "\*\*\*Skipped" "$log" || true)
  # ctest hides a skipped test's output: show each one's reason ("skipped: no CUDA device").
  skipped_names=$(grep -- "\*\*\*Skipped" "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*/\1/' | paste -sd'|')
  if [ -n "$skipped_names" ]; then
    ctest --test-dir "$dir" -R "^($skipped_names)\$" -V 2>&1 | grep -E "^[0-9]+: skipped:" | sort -u
  fi
  if [ -z "$summary" ]; then
    failed=$((failed + 1))
  else
    passed=$((passed + total - bad - skipped))
    failed=$((failed + bad))
    skips=$((skips + skipped))
  fi
  if [ -n "$sanitize" ] && [ "${GPUPROBE_PRUNE_BUILDS:-0}" = 1 ]; then rm -rf "$dir"; fi
done
echo
echo "total: $passed passed, $failed failed, $skips skipped"
[ "$failed" -eq 0 ]
