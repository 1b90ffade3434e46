"""Where a recording `gpuprobe.range` spends its time on a given machine: the same use measured
with NVTX export off, with CLOCK_MONOTONIC instead of the TSC, and with no session, interleaved
and repeated in one run (bench/python/interleaved.py).

    python bench/python/range_variants.py [--rounds N]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gpuprobe  # noqa: E402
from interleaved import measure, print_rows, summarize  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    g = {"gpuprobe": gpuprobe}
    tmp = tempfile.mkdtemp()
    stmt = 'with gpuprobe.range("x"): pass'

    def session(extra):
        config = f"perfetto={os.path.join(tmp, 't.pftrace')},ring=4194304{extra}"
        return lambda: gpuprobe.Session(config)

    cases = {"no session": (stmt, g, None)}
    for extra in ("", ",nvtx=off", ",clock=monotonic", ",nvtx=off,clock=monotonic"):
        cases[f"recording{extra}"] = (stmt, g, session(extra))
    print_rows(summarize(measure(cases, rounds=args.rounds), "recording"), "recording")


if __name__ == "__main__":
    main()
