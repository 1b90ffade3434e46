"""Cost of `with gpuprobe.range("x"):` from Python, against an empty Python context manager
measured in the same run (and, where torch is installed, torch.profiler.record_function and
torch.cuda.nvtx.range_push/pop). The cases are interleaved and repeated (bench/python/
interleaved.py): medians and ranges over rounds, and each case's ratio to the empty context
manager taken within each round.

    python bench/python/range_bench.py [--rounds N] [--json OUT] [--in-asyncio-task]
                                       [--after-cupti]

With --in-asyncio-task every case runs inside an asyncio task, where gpuprobe looks up the task
and records on its track.
"""
import argparse
import contextlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gpuprobe  # noqa: E402
from interleaved import measure, print_rows, summarize  # noqa: E402

BASELINE = "empty Python context manager"


class EmptyContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--json")
    parser.add_argument("--in-asyncio-task", action="store_true")
    parser.add_argument("--after-cupti", action="store_true",
                        help="on a GPU: a session with cupti=all runs first")
    args = parser.parse_args()
    g = {"gpuprobe": gpuprobe, "EmptyContext": EmptyContext, "nullcontext": contextlib.nullcontext,
         "r": gpuprobe.range("y")}
    tmp = tempfile.mkdtemp()
    dropped = []

    def recording(extra=""):
        @contextlib.contextmanager
        def session():
            # A ring large enough that no use drops; a session per measurement, opened untimed.
            config = f"perfetto={os.path.join(tmp, 't.pftrace')},ring=4194304{extra}"
            with gpuprobe.Session(config) as s:
                yield
                dropped.append(s.stats()["dropped"])

        return session

    cases = {
        "empty loop body (pass)": ("pass", g, None),
        BASELINE: ("with EmptyContext(): pass", g, None),
        "contextlib.nullcontext()": ("with nullcontext(): pass", g, None),
        "gpuprobe.range, no session": ('with gpuprobe.range("x"): pass', g, None),
        "gpuprobe.range, recording": ('with gpuprobe.range("x"): pass', g, recording()),
        "gpuprobe.range, recording, nvtx=off": ('with gpuprobe.range("x"): pass', g,
                                                recording(",nvtx=off")),
        "gpuprobe.range object reused, recording": ("with r: pass", g, recording()),
    }
    try:
        import torch

        g["torch"] = torch
        cases["torch.profiler.record_function, no profiler"] = (
            'with torch.profiler.record_function("x"): pass', g, None)
        if torch.cuda.is_available():
            torch.zeros(1, device="cuda")  # a CUDA program's state: the driver, torch's CUPTI
            if args.after_cupti:  # a session with CUPTI (a GPU burst) before the measurement
                gpuprobe.Session(f"cupti=all,perfetto={os.path.join(tmp, 'c.pftrace')}").stop()
            cases["torch.cuda.nvtx.range_push/pop"] = (
                'torch.cuda.nvtx.range_push("x"); torch.cuda.nvtx.range_pop()', g, None)
    except ImportError:
        pass
    if args.in_asyncio_task:
        import asyncio

        async def in_task():
            return measure(cases, rounds=args.rounds, number=args.number)

        samples = asyncio.run(in_task())
        print("every case inside an asyncio task")
    else:
        samples = measure(cases, rounds=args.rounds, number=args.number)
    rows = summarize(samples, BASELINE)
    print(f"{args.rounds} rounds x {args.number} uses, interleaved (order reversed every other round)")
    print_rows(rows, BASELINE)
    print(f"events dropped while recording: {sum(dropped)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "samples_ns": samples,
                       "rows": [dict(zip(("name", "median_ns", "min_ns", "max_ns", "ratio",
                                          "ratio_min", "ratio_max"), r)) for r in rows],
                       "dropped": sum(dropped)}, f, indent=1)


if __name__ == "__main__":
    main()
