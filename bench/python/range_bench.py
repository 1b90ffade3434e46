"""Cost of `with gpuprobe.range("x"):` from Python, against an empty Python context manager
measured in the same run (and, where torch is installed, torch.profiler.record_function and
torch.cuda.nvtx.range_push/pop). Median of repeats, nanoseconds per use.

    python bench/python/range_bench.py [--json OUT]
"""
import argparse
import contextlib
import json
import os
import statistics
import tempfile
import timeit

import gpuprobe

N = 200_000
REPEATS = 7


class EmptyContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def per_use_ns(stmt, setup_globals):
    times = timeit.repeat(stmt, globals=setup_globals, number=N, repeat=REPEATS)
    return statistics.median(times) / N * 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    g = {"gpuprobe": gpuprobe, "EmptyContext": EmptyContext, "nullcontext": contextlib.nullcontext}
    results = {}
    results["empty loop body (pass)"] = per_use_ns("pass", g)
    results["empty Python context manager"] = per_use_ns("with EmptyContext(): pass", g)
    results["contextlib.nullcontext()"] = per_use_ns("with nullcontext(): pass", g)
    results["gpuprobe.range, no session"] = per_use_ns('with gpuprobe.range("x"): pass', g)
    with tempfile.TemporaryDirectory() as tmp:
        # A ring large enough that no iteration drops, flushed between repeats by the collector.
        with gpuprobe.Session(f"perfetto={os.path.join(tmp, 't.pftrace')},ring=4194304") as s:
            results["gpuprobe.range, recording"] = per_use_ns('with gpuprobe.range("x"): pass', g)
            r = gpuprobe.range("y")
            g["r"] = r
            results["gpuprobe.range object reused, recording"] = per_use_ns("with r: pass", g)
            dropped = s.stats()["dropped"]
    try:
        import torch

        g["torch"] = torch
        results["torch.profiler.record_function, no profiler"] = per_use_ns(
            'with torch.profiler.record_function("x"): pass', g)
        if torch.cuda.is_available():
            results["torch.cuda.nvtx.range_push/pop"] = per_use_ns(
                'torch.cuda.nvtx.range_push("x"); torch.cuda.nvtx.range_pop()', g)
    except ImportError:
        pass
    base = results["empty Python context manager"]
    for name, ns in results.items():
        print(f"{name:48s} {ns:9.1f} ns   {ns / base:5.2f}x empty context manager")
    print(f"events dropped while recording: {dropped}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ns_per_use": results, "dropped": dropped}, f, indent=1)


if __name__ == "__main__":
    main()
