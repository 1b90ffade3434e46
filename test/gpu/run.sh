#!/usr/bin/env bash
# Builds gpuprobe on the GPU machine, runs every test (the GPU ones included) and the benchmarks,
# runs a two-rank data-parallel job (NCCL where there are two GPUs), and prints a short table last. Debian packages the machine lacks travel as .deb files in .deps/
# (git-ignored; `apt-get download` them there) and are unpacked into a private prefix.
#   test/gpu/run.sh [all|tests|python|torch|ranks|bursts|production|serving [BENCH ARGS]]   (writes logs under
#   $OUT when set; python, ranks: that part only; production: the serving scenario test with Prometheus, the
#   always-on cost benchmarks (HTTP servers, and in one process: PRODUCTION_PARTS=inprocess) and the
#   full-window dump; serving: the PyTorch serving workload under
#   each recorder, bench/gpu/torch_serving_bench.py, with its arguments)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gpuprobe-gpu-out}
part=${1:-all}
mkdir -p "$out"
prefix=/tmp/gpuprobe-deps

# The short table `all` prints last: from the logs under $out, so that it can also be printed
# from whatever ran when the run is stopped (`timeout 570 bash test/gpu/run.sh all`: the device's
# 10-minute limit cuts a full run short on a slow host, and the logs alone do not come back).
summary() {
  echo "== summary"
  printf '%-28s %s\n' "ctest" "$(grep -E 'tests passed' "$out/ctest.log" | tail -1)"
  printf '%-28s %s\n' "cupti_gpu_test" "$(tail -1 "$out/cupti_gpu_test.log")"
  printf '%-28s %s\n' "gpu stats" "$(grep 'gpu status' "$out/cupti_gpu_test.log")"
  printf '%-28s %s\n' "16 threads, defaults" "$(grep 'threads test' "$out/cupti_threads_test.log") / $(tail -1 "$out/cupti_threads_test.log")"
  printf '%-28s %s\n' "cupti_api=activity" "$(tail -1 "$out/cupti_gpu_test_activity.log") / threads: $(tail -1 "$out/cupti_threads_test_activity.log")"
  printf '%-28s %s\n' "gpu_burst=40ms/150ms" "$(grep '^bursts:' "$out/cupti_burst_test.log") / $(tail -1 "$out/cupti_burst_test.log")"
  printf '%-28s %s\n' "coexistence test" "$(grep -E 'cupti_coexistence_test' "$out/ctest.log" | tail -1)"
  printf '%-28s %s\n' "demo" "$(grep '^GPU:' "$out/demo.txt")"
  printf '%-28s %s\n' "launch cost ratios" "$(grep 'raw CUPTI added' "$out/launch_bench.txt" 2>/dev/null)"
  printf '%-28s %s\n' "after stop" "$(grep "after gpuprobe stop /" "$out/launch_bench.txt" 2>/dev/null)"
  printf '%-28s %s\n' "1M launches" "$(grep '^1M launches' "$out/launch_bench.txt" 2>/dev/null)"
  printf '%-28s %s\n' "torch.profiler" "$(tail -1 "$out/torch_profiler.txt" 2>/dev/null)"
  printf '%-28s %s\n' "python tests" "$(tail -1 "$out/pytest.log" 2>/dev/null)"
  printf '%-28s %s\n' "ranks (gpuprobe recorder)" "$(grep -E 'straggler:' "$out/ranks_gpuprobe.txt" 2>/dev/null)"
  printf '%-28s %s\n' "ranks (torch.profiler)" "$(grep -E 'straggler:' "$out/ranks_torch.txt" 2>/dev/null)"
  printf '%-28s %s\n' "planted hang (flight rec.)" "$(grep -E '^first mismatch' "$out/ranks_hang.txt" 2>/dev/null)"
  printf '%-28s %s\n' "hang in a send (p2p)" "$(grep -E '^first mismatch' "$out/ranks_hang_p2p.txt" 2>/dev/null)"
  printf '%-28s %s\n' "hang, NCCL's watchdog" "$(grep -E '^first mismatch' "$out/ranks_watchdog.txt" 2>/dev/null)"
  printf '%-28s %s\n' "NCCL kernels in ranges" "$(tail -1 "$out/ranks_nccl_kernels.txt" 2>/dev/null)"
  printf '%-28s %s\n' "python range (recording)" "$(grep 'gpuprobe.range, recording' "$out/python_bench.txt" 2>/dev/null)"
  printf '%-28s %s\n' "python empty ctx manager" "$(grep 'empty Python context manager' "$out/python_bench.txt" 2>/dev/null)"
  printf '%-28s %s\n' "python range in a task" "$(grep 'gpuprobe.range, recording' "$out/python_bench_task.txt" 2>/dev/null)"
} 2>/dev/null  # a part not reached has no log yet
if [ "$part" = all ]; then
  trap 'echo "== stopped by a signal: the summary of what ran"; summary; exit 124' TERM INT
fi

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
nvcc --version | tail -1
cmake --version | head -1
ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>/dev/null | head -3

# Unpack only what the machine does not have.
mkdir -p "$prefix"
have_header() { echo "#include <$1>" | g++ -x c++ -fsyntax-only - 2>/dev/null; }
for deb in .deps/*.deb; do
  case "$deb" in
    *zlib1g-dev*) have_header zlib.h && continue ;;
    *nlohmann*) have_header nlohmann/json.hpp && continue ;;
    *catch2*) have_header catch2/catch_test_macros.hpp && continue ;;
    *benchmark*) have_header benchmark/benchmark.h && continue ;;
    *cli11*) have_header CLI/CLI.hpp && continue ;;
    *absl*) have_header absl/strings/str_format.h && continue ;;
  esac
  echo "unpacking $deb"
  dpkg -x "$deb" "$prefix"
done
# The -dev package's libz.so points at a runtime the machine has under another directory.
if [ -d "$prefix/usr/lib/x86_64-linux-gnu" ] && [ ! -e "$prefix/usr/lib/x86_64-linux-gnu/libz.so.1" ]; then
  ln -sf "$(ldconfig -p | awk '/libz.so.1 /{print $NF; exit}')" "$prefix/usr/lib/x86_64-linux-gnu/libz.so"
fi
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export PATH="$PATH:$prefix/usr/bin"  # prometheus and promtool, from the prometheus .deb

configure() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DCMAKE_CUDA_ARCHITECTURES=90 2>&1 | grep -E "gpuprobe|Catch2|CUDA compiler identification|Error" | tee "$out/configure.log"
}

# tests: the build and every test, the GPU ones included, and launch_helper_test 20 times more
# (it once failed an arithmetic check: copies and kernels on unordered streams, fixed in 8259def).
if [ "$part" = tests ]; then
  configure
  cmake --build build-gpu 2>&1 | tail -1
  ctest --test-dir build-gpu --output-on-failure -j8 2>&1 | tee "$out/ctest.log" | tail -6
  ok=0
  for i in $(seq 20); do build-gpu/test/gpu/launch_helper_test >/dev/null 2>&1 && ok=$((ok + 1)); done
  echo "launch_helper_test: $ok of 20 runs passed" | tee "$out/launch_helper_repeat.txt"
  exit 0
fi
# bursts: the gpu_burst= test and the launch benchmark (its cases include one between bursts).
if [ "$part" = bursts ]; then
  configure
  cmake --build build-gpu --target cupti_burst_test launch_bench 2>&1 | tail -1
  build-gpu/test/gpu/cupti_burst_test 2>&1 | tee "$out/cupti_burst_test.log" | tail -4
  echo "== the same with every core busy (a loaded machine starves the collector)"
  for _ in $(seq "$(nproc)"); do timeout 20 sh -c 'while :; do :; done' & done
  build-gpu/test/gpu/cupti_burst_test 2>&1 | tee "$out/cupti_burst_test_loaded.log" | tail -4
  wait
  timeout "${LAUNCH_TIMEOUT:-200}" build-gpu/bench/gpu/launch_bench 2>&1 | tee "$out/launch_bench.txt" | tail -16
  exit 0
fi

if [ "$part" = all ]; then
  echo "== build"
  configure
  cmake --build build-gpu 2>&1 | tail -3 | tee "$out/build.log"

  echo "== tests"
  ctest --test-dir build-gpu --output-on-failure -j8 2>&1 | tee "$out/ctest.log" | tail -15
  echo "== GPU test output"
  GPUPROBE_GPU_TEST_TRACE="$out/gpu_test_trace.json" build-gpu/test/gpu/cupti_gpu_test 2>&1 | tee "$out/cupti_gpu_test.log" | tail -15

  build-gpu/test/gpu/cupti_threads_test 2>&1 | tee "$out/cupti_threads_test.log" | tail -4
  build-gpu/test/gpu/cupti_burst_test 2>&1 | tee "$out/cupti_burst_test.log" | tail -3
  echo "== the same two with the calls as CUPTI API activity records (cupti_api=activity)"
  GPUPROBE_GPU_TEST_CONFIG=",cupti_api=activity" build-gpu/test/gpu/cupti_gpu_test 2>&1 |
    tee "$out/cupti_gpu_test_activity.log" | tail -3
  GPUPROBE_GPU_TEST_CONFIG=",cupti_api=activity" build-gpu/test/gpu/cupti_threads_test 2>&1 |
    tee "$out/cupti_threads_test_activity.log" | tail -3

  echo "== demo"
  build-gpu/examples/demo "$out/demo_trace.json" 2>&1 | tee "$out/demo.txt" | tail -30

  echo "== benchmarks"
  if [ -x build-gpu/bench/range_bench ]; then
    build-gpu/bench/range_bench --benchmark_min_time=0.2 --benchmark_repetitions=4 \
      --benchmark_enable_random_interleaving=true \
      --benchmark_report_aggregates_only=true --benchmark_out="$out/bench.json" \
      --benchmark_out_format=json >/dev/null 2>&1
    python3 bench/summarize.py "$out/bench.json" | tee "$out/bench.txt"
  fi

  echo "== GPU launch benchmark"
  if [ -x build-gpu/bench/gpu/launch_bench ]; then
    build-gpu/bench/gpu/launch_bench 2>&1 | tee "$out/launch_bench.txt" | tail -14
  fi
  python3 bench/gpu/torch_profiler_launch.py 2>&1 | tail -2 | tee "$out/torch_profiler.txt"
fi

# The machine's python3 (a venv holding torch) has no network: build tools and pytest travel as
# wheels in .deps/wheels and go, like the package, into directories on PYTHONPATH.
deps=/tmp/gpuprobe-pydeps
pkg=/tmp/gpuprobe-py
install_package() {
  rm -rf "$pkg"
  python3 -m pip install -q --no-index --find-links .deps/wheels --target "$deps" \
    scikit-build-core pybind11 pytest 2>&1 | tail -2
  # CMake reads CMAKE_PREFIX_PATH from the environment: headers from the unpacked .debs.
  CMAKE_PREFIX_PATH="$prefix/usr" PYTHONPATH="$deps" python3 -m pip install -q --no-index \
    --no-build-isolation --target "$pkg" . 2>&1 | tail -5
}

serving() {
  if [ ! -x build-gpu/gpuprobe ] || [ ! -e build-gpu/bench/gpu/libraw_cupti_floor.so ]; then
    configure
    cmake --build build-gpu --target gpuprobe_cli raw_cupti_floor 2>&1 | tail -1
  fi
  PYTHONPATH="$pkg" GPUPROBE_CLI=build-gpu/gpuprobe \
    GPUPROBE_RAW_CUPTI="$PWD/build-gpu/bench/gpu/libraw_cupti_floor.so" \
    timeout "${SERVING_TIMEOUT:-500}" python3 bench/gpu/torch_serving_bench.py "$@" 2>&1 | tee "$out/serving.txt"
}
serving_drops() {
  PYTHONPATH="$pkg" timeout 120 python3 bench/gpu/torch_serving_bench.py --drops 2>&1 | grep -v Warning |
    tee "$out/serving_drops.txt"
}

# production: the serving example end to end (Prometheus scraping, the trigger's dumps explained),
# what always-on costs its throughput, and a dump of a full 256 MiB window.
if [ "$part" = production ]; then
  configure
  cmake --build build-gpu --target gpuprobe_cli flight_bench 2>&1 | tail -1
  install_package
  parts=${PRODUCTION_PARTS:-scenario cost dump}  # and: calls, parts, inprocess, range
  echo "== the serving scenario (test/python/test_serving_scenario.py)"
  [[ $parts == *scenario* ]] && PYTHONPATH="$pkg:$deps" GPUPROBE_BUILD_DIR=build-gpu timeout 240 python3 -m pytest -q -s -rs \
    -p no:logging -p no:cacheprovider test/python/test_serving_scenario.py 2>&1 |
    grep -v Warning | tee "$out/scenario.log" | tail -6
  echo "== always-on cost (bench/python/serving_cost.py)"
  [[ $parts == *cost* ]] && PYTHONPATH="$pkg" timeout 300 python3 bench/python/serving_cost.py --device cuda \
    --arms none,always-on,always-on+scraper,always-on+dump,always-on+gpu-bursts \
    ${COST_ARGS:-} 2>&1 | grep -v Warning | tee "$out/serving_cost.txt" | tail -12
  if [[ $parts == *calls* ]]; then
    echo "== Python calls and GC passes per request that always-on adds (bench/python/always_on_calls.py)"
    PYTHONPATH="$pkg" timeout 200 python3 bench/python/always_on_calls.py --device cuda \
      ${CALLS_ARGS:-} 2>&1 | grep -v "Warning\|^gpuprobe: " | tee "$out/always_on_calls.txt" | tail -40
  fi
  # PARTS_PROCESSES=N: N processes in turn (default 1), each its own layout of the same code, and
  # last the two ranges' cost per process pooled (a process's figure moves by +-0.4 us with it).
  if [[ $parts == *parts* && -z ${PARTS_BASELINE:-} ]]; then
    for process in $(seq "${PARTS_PROCESSES:-1}"); do
      echo "== what each per-request part of always-on adds, process $process (bench/python/always_on_parts.py)"
      PYTHONPATH="$pkg" timeout 300 python3 bench/python/always_on_parts.py --device cuda \
        ${PARTS_ARGS:-} 2>&1 | grep -v "Warning\|^gpuprobe: " | tee -a "$out/always_on_parts.txt" | tail -12
    done
    grep '+ graph range - off ' "$out/always_on_parts.txt" |
      awk '{pct = $(NF-4) + 0; n++; sum += pct; if (n == 1 || pct > max) max = pct; if (pct <= 1) under++}
        END {if (n) printf "the two ranges over %d processes: mean %+.2f %% of a request, max %+.2f %%, <= 1 %% in %d\n", n, sum / n, max, under}'
  fi
  # PARTS_BASELINE=DIR: an earlier source tree (carried in the git-ignored .deps/), its package
  # built beside this one, and the parts of both measured in turn on the same machine,
  # PARTS_PAIRS times (default 2), so that two versions compare without the hosts' spread.
  if [[ $parts == *parts* && -n ${PARTS_BASELINE:-} ]]; then
    (cd "$PARTS_BASELINE" && CMAKE_PREFIX_PATH="$prefix/usr" PYTHONPATH="$deps" python3 -m pip \
      install -q --no-index --no-build-isolation --target "$pkg-baseline" . 2>&1 | tail -5)
    for pair in $(seq "${PARTS_PAIRS:-2}"); do
      for version in this baseline; do
        where=$pkg
        [ "$version" = baseline ] && where=$pkg-baseline
        echo "== always-on's parts, $version tree, pair $pair (bench/python/always_on_parts.py)"
        PYTHONPATH="$where" timeout 300 python3 bench/python/always_on_parts.py --device cuda \
          ${PARTS_ARGS:-} 2>&1 | grep -v "Warning\|^gpuprobe: " |
          tee "$out/always_on_parts_${version}_$pair.txt" | tail -6
      done
    done
  fi
  echo "== always-on cost in one process (bench/python/always_on_cost.py)"
  if [[ $parts == *inprocess* ]]; then
    # the GPU's clocks and power state beside the slices' times (the json's "slices")
    nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu \
      --format=csv,noheader -lms 100 >"$out/gpu_clocks.csv" 2>&1 &
    smi=$!
    PYTHONPATH="$pkg" timeout "${INPROCESS_TIMEOUT:-300}" python3 bench/python/always_on_cost.py \
      --device cuda --json "$out/always_on_cost.json" ${INPROCESS_ARGS:-} 2>&1 |
      grep -v "Warning\|^gpuprobe: " | tee "$out/always_on_cost.txt" | tail -16
    kill $smi 2>/dev/null
  fi
  if [[ $parts == *range* ]]; then
    echo "== a Python range's cost, and after a session with CUPTI (bench/python/range_bench.py)"
    PYTHONPATH="$pkg" python3 bench/python/range_bench.py --rounds 5 2>&1 | tee "$out/range_bench.txt" | tail -11
    PYTHONPATH="$pkg" python3 bench/python/range_bench.py --rounds 5 --after-cupti 2>&1 |
      grep -v "^gpuprobe: " | tee "$out/range_bench_after_cupti.txt" | tail -11
  fi
  echo "== a dump of a full 256 MiB window"
  [[ $parts == *dump* ]] && build-gpu/bench/flight_bench --benchmark_filter=FullWindow 2>&1 | tee "$out/full_window.txt" | tail -3
  # DUMP_BASELINE=DIR: an earlier source tree (in .deps/); its flight_bench and this tree's write
  # the Perfetto dump of a full window in turn, DUMP_ROUNDS times each (default 3), the order
  # flipped every round.
  if [[ $parts == *dump* && -n ${DUMP_BASELINE:-} ]]; then
    cmake -S "$DUMP_BASELINE" -B build-baseline -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_PREFIX_PATH="$prefix/usr" -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
    cmake --build build-baseline --target flight_bench 2>&1 | tail -1
    for round in $(seq "${DUMP_ROUNDS:-3}"); do
      order="this baseline"
      [ $((round % 2)) = 0 ] && order="baseline this"
      for version in $order; do
        bench=build-gpu/bench/flight_bench
        [ "$version" = baseline ] && bench=build-baseline/bench/flight_bench
        printf 'round %s %-8s ' "$round" "$version"
        "$bench" --benchmark_filter='FullWindow.*formats:0' 2>&1 | grep '^BM_FullWindow' | awk '{print $2, $3}'
      done
    done | tee "$out/full_window_ab.txt"
  fi
  exit 0
fi

if [ "$part" = serving ]; then
  echo "== serving: a small transformer, eager and compiled, under each recorder"
  install_package
  shift
  [ -n "${SERVING_NO_DROPS:-}" ] || serving_drops
  serving "$@"
  exit 0
fi

# ranks: a data-parallel job, one rank per GPU over NCCL where there are several (2, 4 or 8;
# with one GPU, two ranks share it and all-reduce through gloo), under each recorder, rank 1
# computing 4x as much: the straggler, NCCL's kernels and the ranges that launched them, the rank
# label of each rank's metrics. Then a planted hang (rank 1 skips an all-reduce), PyTorch's flight
# recorder dumps read by `gpuprobe report --torch-flight-recorder` (and the traces merged with them):
# found by the program's own timeout (every rank's trace complete); over NCCL also a hang in a
# send (rank 1 skips one), and the all-reduce hang found by NCCL's watchdog (which dumps and takes
# the waiting ranks down). RANKS_TIMEOUT: seconds each job may take (default 300).
ranks() {
  if [ ! -x build-gpu/gpuprobe ]; then
    configure
    cmake --build build-gpu --target gpuprobe_cli 2>&1 | tail -1
  fi
  [ -d "$pkg/gpuprobe" ] || install_package
  local gpus backend world
  gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
  backend=gloo world=2
  if [ "$gpus" -ge 2 ]; then backend=nccl world=$((gpus > 8 ? 8 : gpus)); fi
  job() {  # OUT_NAME ARGS...: the workload, its log, and its output's tail when it fails
    local name=$1; shift
    PYTHONPATH="$pkg" timeout "${RANKS_TIMEOUT:-300}" python3 test/python/dist_workload.py "$out/$name" \
      --backend $backend --device cuda --world "$world" "$@" >"$out/$name.log" 2>&1 ||
      grep -v "Warning\|warn\|^W1" "$out/$name.log" | tail -60  # a stuck rank's stack too
  }
  echo "== several ranks: a data-parallel job, $world ranks on $gpus GPU(s) over $backend, rank 1 computing 4x as much"
  for recorder in gpuprobe torch; do
    job "ranks_$recorder" --slow-rank 1 --steps 20 --recorder "$recorder"
    build-gpu/gpuprobe report "$out/ranks_$recorder" 2>&1 | tee "$out/ranks_$recorder.txt"
    build-gpu/gpuprobe report "$out/ranks_$recorder/rank1.json" --limit 5 >"$out/ranks_${recorder}_rank1.txt" 2>&1
  done
  if [ $backend = nccl ]; then
    python3 test/gpu/collective_kernels.py "$out/ranks_gpuprobe" | tee "$out/ranks_nccl_kernels.txt"
  fi
  echo "== rank 1's ranges, with the GPU time of the kernels each launched"
  grep -E "^ranges|GPU ms \(launched\)|^  (ProfilerStep|forward\+backward|all_reduce) " "$out/ranks_gpuprobe_rank1.txt" | head -5
  echo "== each rank's metrics carry its rank"
  for prom in "$out"/ranks_gpuprobe/rank*.prom; do
    echo "$(basename "$prom"): $(grep -v '^#' "$prom" | grep -c 'rank="') of $(grep -vc '^#' "$prom") samples labelled; $(grep '^gpuprobe_step_duration_seconds_count' "$prom")"
  done | tee "$out/ranks_metrics.txt"
  local p2p=""; [ $backend = nccl ] && p2p=--p2p  # gloo's recorder keeps no sends or receives
  echo "== a planted hang over $backend: rank 1 skips step 5's all-reduce, the others time out; the flight recorder's dumps"
  job ranks_hang --steps 10 --recorder gpuprobe $p2p --hang-step 5 --hang-rank 1 --timeout 10
  ls "$out/ranks_hang"
  build-gpu/gpuprobe report --torch-flight-recorder "$out/ranks_hang" --merge "$out/ranks_hang_merged" 2>&1 |
    tee "$out/ranks_hang.txt"
  if [ $backend = nccl ]; then
    echo "== a planted hang in a send: rank 1 skips step 5's send to rank $((2 % world)), whose receive times out"
    job ranks_hang_p2p --steps 10 --recorder gpuprobe --p2p --hang-step 5 --hang-rank 1 --hang-op send --timeout 10
    build-gpu/gpuprobe report --torch-flight-recorder "$out/ranks_hang_p2p" 2>&1 | tee "$out/ranks_hang_p2p.txt"
    echo "== the all-reduce hang found by NCCL's watchdog (it dumps on the timeout and takes the waiting ranks down)"
    job ranks_watchdog --steps 10 --recorder gpuprobe --hang-step 5 --hang-rank 1 --timeout 10 --hang-mode watchdog
    grep "ended with" "$out/ranks_watchdog.log"
    ls "$out/ranks_watchdog"
    build-gpu/gpuprobe report --torch-flight-recorder "$out/ranks_watchdog" 2>&1 | tee "$out/ranks_watchdog.txt"
  fi
}

python_tests() {
  echo "== python: the package over torch's CUDA build"
  # The Python tests also run the gpuprobe command and the synthetic-trace writer.
  if [ ! -x build-gpu/gpuprobe ] || [ ! -x build-gpu/test/write_synthetic_gpu_trace ]; then
    configure
    cmake --build build-gpu --target gpuprobe_cli write_synthetic_gpu_trace 2>&1 | tail -1
  fi
  install_package
  GPUPROBE_TIMING_TESTS=1 PYTHONPATH="$pkg:$deps" GPUPROBE_BUILD_DIR=build-gpu python3 -m pytest -q -rsP -p no:logging \
    -p no:cacheprovider ${GPU_PYTESTS:-test/python/test_torch_cuda.py test/python/test_python_api.py \
    test/python/test_torch_integration.py test/python/test_compile_accounting.py \
    test/python/test_waiting_and_blocked.py test/python/test_stream_waits_cuda.py test/python/test_compare_per_module.py \
    test/python/test_triton_compile.py test/python/test_compare_modes.py} 2>&1 | tee "$out/pytest.log" | tail -15
}
# torch: real PyTorch programs (issue 40): instrument's regression tests and the model zoo on
# the GPU (eager for every CI model, Inductor for CI's few; CUPTI kernels recorded, deterministic
# algorithms), what instrument costs per module call (CPU, this quiet host), and the zoo's
# per-step overhead against no profiler and torch.profiler on the GPU.
torch_part() {
  echo "== torch: instrument on real models"
  if [ ! -x build-gpu/gpuprobe ]; then
    configure
    cmake --build build-gpu --target gpuprobe_cli 2>&1 | tail -1
  fi
  install_package
  PYTHONPATH="$pkg:$deps" GPUPROBE_BUILD_DIR=build-gpu timeout 150 python3 -m pytest -q -p no:logging \
    -p no:cacheprovider test/python/test_instrument_never_changes.py 2>&1 | tail -3 | tee "$out/instrument_tests.log"
  PYTHONPATH="$pkg:$deps" GPUPROBE_BUILD_DIR=build-gpu GPUPROBE_ZOO_DEVICE=cuda \
    GPUPROBE_ZOO_TABLE="$out/zoo_cuda.jsonl" CUBLAS_WORKSPACE_CONFIG=:4096:8 timeout "${ZOO_TIMEOUT:-200}" \
    python3 -m pytest -q -rf -p no:logging -p no:cacheprovider test/python/test_model_zoo.py \
    -k "${ZOO_K:-eager or inductor}" 2>&1 | grep -v "^SKIPPED" | tail -25 | tee "$out/zoo_cuda.log"
  for grad in "" --grad; do
    PYTHONPATH="$pkg" python3 bench/python/module_hooks.py --rounds 15 $grad 2>&1 | tail -6 |
      tee -a "$out/module_hooks.txt"
  done
  # A torch.profiler trace of this machine's torch on CUDA for the wild corpus (issue 41), and
  # the report on it (the test compares it with HTA once it is in test/data/wild).
  python3 test/data/wild/record_torch_trace.py "$out/torch_cuda_resnet18.json.gz" --device cuda \
    2>&1 | tail -2
  build-gpu/gpuprobe report "$out/torch_cuda_resnet18.json.gz" 2>&1 | head -12 | tee "$out/wild_cuda_report.txt"
  PYTHONPATH="$pkg" timeout "${ZOO_BENCH_TIMEOUT:-150}" python3 bench/python/zoo_overhead.py --device cuda \
    --rounds 5 ${ZOO_BENCH_ARGS:-} 2>&1 | grep -v "Warning\|^gpuprobe: " | tee "$out/zoo_overhead_cuda.txt" | tail -32
}
if [ "$part" = torch ]; then
  torch_part
  exit 0
fi
if [ "$part" = ranks ]; then
  ranks
  exit 0
fi
# python: only the Python tests on the GPU (GPU_PYTESTS: other test files; with INPROCESS=1, the
# in-process cost benchmark).
if [ "$part" = python ]; then
  python_tests
  [ -n "${INPROCESS:-}" ] && PYTHONPATH="$pkg" timeout "${INPROCESS_TIMEOUT:-300}" python3 bench/python/always_on_cost.py \
    --device cuda --json "$out/always_on_cost.json" ${INPROCESS_ARGS:-} 2>&1 |
    grep -v "Warning\|^gpuprobe: " | tee "$out/always_on_cost.txt" | tail -14
  exit 0
fi
python_tests
PYTHONPATH="$pkg" python3 bench/python/range_bench.py --json "$out/python_bench.json" 2>&1 |
  tee "$out/python_bench.txt"
PYTHONPATH="$pkg" python3 bench/python/range_bench.py --in-asyncio-task 2>&1 |
  tee "$out/python_bench_task.txt"

ranks

summary
