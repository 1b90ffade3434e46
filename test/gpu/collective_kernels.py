"""The collective library's kernels in the gpuprobe traces of a multi-rank job (rank<r>.json in
DIR): per rank, how many ran, on which streams, and which ranges launched them (a kernel's
"range" argument, set when its launch was recorded with the API kinds). Exits 1 when a rank has
none, or when any of them has no range.

    python3 collective_kernels.py DIR [--prefix ncclDevKernel]
"""
import argparse
import collections
import json
import pathlib
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--prefix", default="ncclDevKernel")
    args = parser.parse_args()
    ok = True
    traces = sorted(args.dir.glob("rank*.json"))
    for trace in traces:
        events = json.loads(trace.read_text())["traceEvents"]
        kernels = [e for e in events
                   if e.get("cat") == "kernel" and e.get("name", "").startswith(args.prefix)]
        streams = collections.Counter(k["args"].get("stream") for k in kernels)
        ranges = collections.Counter(k["args"].get("range", "(no range)") for k in kernels)
        total_ms = sum(k.get("dur", 0) for k in kernels) / 1e3
        print(f"{trace.name}: {len(kernels)} {args.prefix} kernels, {total_ms:.3f} ms; streams "
              + ", ".join(f"{s}: {n}" for s, n in sorted(streams.items(), key=str))
              + "; launched in " + ", ".join(f"{r}: {n}" for r, n in ranges.most_common()))
        ok = ok and bool(kernels) and "(no range)" not in ranges
    print(f"collective kernels: {'every' if ok and traces else 'NOT every'} rank's attributed "
          f"to ranges ({len(traces)} traces)")
    return 0 if ok and traces else 1


if __name__ == "__main__":
    sys.exit(main())
