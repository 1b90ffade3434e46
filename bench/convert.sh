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
rounds=${ROUNDS:-3}
# Each case runs once per round, the order reversed every other round; the median and range over
# rounds are printed, so neither order nor the machine's drift decides a figure.
cases=(
  "info, Chrome JSON|build/gpuprobe info $work/big.json"
  "info, Perfetto|build/gpuprobe info $work/big.pftrace"
  "convert Chrome JSON -> Perfetto|build/gpuprobe convert $work/big.json $work/out.pftrace"
  "convert Perfetto -> Chrome JSON|build/gpuprobe convert $work/big.pftrace $work/out.json"
  "convert Perfetto -> TensorBoard|build/gpuprobe convert $work/big.pftrace $work/tb/"
  "convert Chrome JSON -> Chrome .json.gz|build/gpuprobe convert $work/big.json $work/out.json.gz"
  "report, Chrome JSON|build/gpuprobe report $work/big.json"
  "report, Perfetto|build/gpuprobe report $work/big.pftrace"
)
printf '%s events: Chrome JSON %s MB, Perfetto %s MB; %s rounds\n' "$n" \
  "$(($(stat -c %s "$work/big.json") / 1000000))" "$(($(stat -c %s "$work/big.pftrace") / 1000000))" "$rounds"
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < ${#cases[@]}; k++)); do
    i=$k; ((r % 2 == 1)) && i=$((${#cases[@]} - 1 - k))
    label=${cases[$i]%%|*}
    # shellcheck disable=SC2086  # the command is split into words on purpose
    /usr/bin/time -f "%e %M" -o "$work/time" ${cases[$i]#*|} >/dev/null 2>"$work/stderr" ||
      { echo "$label failed:"; cat "$work/stderr"; exit 1; }
    echo "$i $(cat "$work/time")" >>"$work/samples"
  done
done
for ((i = 0; i < ${#cases[@]}; i++)); do
  rss=$(awk -v i="$i" '$1 == i && $3 > m { m = $3 } END { print m }' "$work/samples")
  awk -v i="$i" '$1 == i { print $2 }' "$work/samples" | sort -n |
    awk -v l="${cases[$i]%%|*}" -v n="$n" -v kb="$rss" '{ s[++c] = $1 }
      END {
        med = c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
        printf "%-40s %8.2f s (%.2f..%.2f) %8.2f M events/s %8.1f MiB max RSS\n", l, med, s[1],
               s[c], n / med / 1e6, kb / 1024
      }'
done
