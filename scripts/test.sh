#!/usr/bin/env bash
# Command 2 of the README: installs what is missing, then builds and runs every test three
# times: a plain build, under ThreadSanitizer, and under AddressSanitizer + UBSan.
#   scripts/test.sh [plain|thread|address+undefined ...]   (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh || exit 1

configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(plain thread address+undefined)

passed=0
failed=0
skips=0
for config in "${configs[@]}"; do
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
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1" \
    ctest --test-dir "$dir" --output-on-failure -j2 2>&1 | tee "$log"
  summary=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  total=$(echo "$summary" | sed -E 's/.* out of ([0-9]+).*/\1/')
  bad=$(echo "$summary" | sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/')
  skipped=$(grep -c -- "\*\*\*Skipped" "$log" || true)
  if [ -z "$summary" ]; then
    failed=$((failed + 1))
  else
    passed=$((passed + total - bad - skipped))
    failed=$((failed + bad))
    skips=$((skips + skipped))
  fi
done
echo
echo "total: $passed passed, $failed failed, $skips skipped"
[ "$failed" -eq 0 ]
