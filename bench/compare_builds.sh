#!/usr/bin/env bash
# Two builds of gpuprobe side by side in one run, so that a change is judged against its baseline
# on the same machine at the same time: the recording range (range_bench), `gpuprobe report` on
# one large trace (Chrome JSON and Perfetto) and the sinks' throughput (`gpuprobe convert` of it,
# Chrome JSON -> Perfetto and back), each case alternating between the builds,
# the order swapped every other round. Prints per case the median of each build, the range over
# rounds, and the ratio NEW / OLD.
#   bench/compare_builds.sh OLD_BUILD_DIR NEW_BUILD_DIR [EVENTS, default 10000000]
# Each build dir needs gpuprobe, bench/range_bench and (NEW) bench/write_large_trace, e.g.
#   git worktree add /tmp/old <commit> && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/old/build --target gpuprobe_cli range_bench
set -euo pipefail
old=$1 new=$2 n=${3:-10000000} rounds=${ROUNDS:-5}
for b in "$old" "$new"; do
  [ -x "$b/gpuprobe" ] && [ -x "$b/bench/range_bench" ] || { echo "$b: no gpuprobe or bench/range_bench" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$new/bench/write_large_trace" "$n" "chrome=$work/big.json" >/dev/null
"$new/bench/write_large_trace" "$n" "perfetto=$work/big.pftrace" >/dev/null
echo "$n events; $rounds rounds; OLD=$old NEW=$new"

# One sample: "CASE BUILD VALUE" appended to the samples file.
range_sample() {  # build label
  "$1/bench/range_bench" --benchmark_filter='^BM_Range_Recording$|^BM_Floor' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$work/range.json" --benchmark_out_format=json >/dev/null 2>&1
  python3 -c '
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(b["run_name"] + "_ns", sys.argv[2], b["real_time"])' "$work/range.json" "$2" >>"$work/samples"
}
report_sample() {  # build label trace case
  /usr/bin/time -f "%e" -o "$work/time" "$1/gpuprobe" report "$3" >/dev/null
  echo "$4 $2 $(cat "$work/time")" >>"$work/samples"
}
convert_sample() {  # build label input output case
  /usr/bin/time -f "%e" -o "$work/time" "$1/gpuprobe" convert "$3" "$4" >/dev/null 2>&1
  rm -f "$4"
  echo "$5 $2 $(cat "$work/time")" >>"$work/samples"
}
for ((r = 0; r < rounds; r++)); do
  builds=("$old OLD" "$new NEW")
  ((r % 2 == 1)) && builds=("$new NEW" "$old OLD")
  for c in range chrome perfetto to_perfetto to_chrome; do
    for pair in "${builds[@]}"; do
      read -r dir label <<<"$pair"
      case $c in
        range) range_sample "$dir" "$label" ;;
        chrome) report_sample "$dir" "$label" "$work/big.json" report_chrome_json_s ;;
        perfetto) report_sample "$dir" "$label" "$work/big.pftrace" report_perfetto_s ;;
        to_perfetto) convert_sample "$dir" "$label" "$work/big.json" "$work/out.pftrace" convert_to_perfetto_s ;;
        to_chrome) convert_sample "$dir" "$label" "$work/big.pftrace" "$work/out.json" convert_to_chrome_s ;;
      esac
    done
  done
done
python3 - "$work/samples" <<'EOF'
import statistics, sys
samples = {}
for line in open(sys.argv[1]):
    case, build, value = line.split()
    samples.setdefault(case, {}).setdefault(build, []).append(float(value))
print(f"{'case':34} {'OLD median':>12} {'NEW median':>12} {'NEW/OLD':>8}   ranges (OLD | NEW)")
for case, by in samples.items():
    o, n = statistics.median(by["OLD"]), statistics.median(by["NEW"])
    print(f"{case:34} {o:12.3f} {n:12.3f} {n / o:8.3f}   "
          f"{min(by['OLD']):.3f}..{max(by['OLD']):.3f} | {min(by['NEW']):.3f}..{max(by['NEW']):.3f}")
EOF
