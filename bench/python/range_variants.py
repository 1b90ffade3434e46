"""Where a recording `gpuprobe.range` spends its time on a given machine: the same use measured
with NVTX export off, with CLOCK_MONOTONIC instead of the TSC, and with no session, in one run.

    python bench/python/range_variants.py
"""
import os
import statistics
import tempfile
import timeit

import gpuprobe

N, REPEATS = 200_000, 7


def per_use_ns(stmt, g):
    return statistics.median(timeit.repeat(stmt, globals=g, number=N, repeat=REPEATS)) / N * 1e9


def main():
    g = {"gpuprobe": gpuprobe}
    rows = [("no session", per_use_ns('with gpuprobe.range("x"): pass', g))]
    with tempfile.TemporaryDirectory() as tmp:
        for extra in ("", ",nvtx=off", ",clock=monotonic", ",nvtx=off,clock=monotonic"):
            config = f"perfetto={os.path.join(tmp, 't.pftrace')},ring=4194304{extra}"
            with gpuprobe.Session(config):
                rows.append((f"recording{extra}", per_use_ns('with gpuprobe.range("x"): pass', g)))
    for name, ns in rows:
        print(f"{name:40s} {ns:8.1f} ns")


if __name__ == "__main__":
    main()
