#!/usr/bin/env bash
# `gpuprobe convert`, `info` and `report` on a large trace: wall time and peak memory (max RSS) of
# each, to show that conversion streams (memory stays flat as the trace grows) and what a report
# costs.
#   bench/convert.sh [EVENTS, default 10000000]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000000}
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target gpuprobe_cli write_large_trace >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/bench/write_large_trace "$n" "chrome=$work/big.json"
build/bench/write_large_trace "$n" "perfetto=$work/big.pftrace"
measure() {
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr"
  read -r seconds kb <"$work/time"
  awk -v l="$label" -v s="$seconds" -v kb="$kb" -v n="$n" \
    'BEGIN { printf "%-40s %8.2f s %8.2f M events/s %8.1f MiB max RSS\n", l, s, n / s / 1e6, kb / 1024 }'
  grep -v "^converting" "$work/stderr" || true
}
printf '%s events: Chrome JSON %s MB, Perfetto %s MB\n' "$n" \
  "$(($(stat -c %s "$work/big.json") / 1000000))" "$(($(stat -c %s "$work/big.pftrace") / 1000000))"
measure "info, Chrome JSON" build/gpuprobe info "$work/big.json"
measure "info, Perfetto" build/gpuprobe info "$work/big.pftrace"
measure "convert Chrome JSON -> Perfetto" build/gpuprobe convert "$work/big.json" "$work/out.pftrace"
measure "convert Perfetto -> Chrome JSON" build/gpuprobe convert "$work/big.pftrace" "$work/out.json"
measure "convert Perfetto -> TensorBoard" build/gpuprobe convert "$work/big.pftrace" "$work/tb/"
measure "convert Chrome JSON -> Chrome .json.gz" build/gpuprobe convert "$work/big.json" "$work/out.json.gz"
measure "report, Chrome JSON" build/gpuprobe report "$work/big.json"
measure "report, Perfetto" build/gpuprobe report "$work/big.pftrace"
