"""What watch_compile()'s guard ranges cost a compiled call (issue 44, part 1): a torch.compile'd
function called N times per round, under a recording session, with watch_compile(guards=True),
watch_compile(guards=False) and no watcher, the arms interleaved in every round (order rotated);
ns per call, median of the rounds, and the difference guards on - off. Also, per call, the guard
time gpuprobe recorded beside torch.profiler's "TorchDynamo Cache Lookup" for a frame whose guards
are planted (`--tensors`: a list of that many tensors), each on its own run.

    python bench/python/guard_cost.py [--rounds 7] [--calls 20000] [--tensors 1000]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch

import gpuprobe
import gpuprobe.torch as gt


def tiny(x):
    return x * 2 + 1


def planted(xs):
    return sum(x.sum() for x in xs)


def per_call_ns(fn, arg, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn(arg)
    return (time.perf_counter_ns() - start) / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--tensors", type=int, default=1000)
    args = parser.parse_args()
    out = tempfile.mkdtemp()
    compiled = torch.compile(tiny)
    x = torch.randn(8)
    arms = {"guards on": dict(guards=True), "guards off": dict(guards=False), "no watcher": None}
    times = {name: [] for name in arms}
    with gpuprobe.Session(f"chrome={out}/cost.json"):
        for _ in range(3):
            compiled(x)  # compiled, first run, warm
        names = list(arms)
        for r in range(args.rounds):
            for name in names[r % 3:] + names[:r % 3]:
                watcher = (gt.watch_compile(cache_keys=False, **arms[name])
                           if arms[name] is not None else None)
                per_call_ns(compiled, x, 200)  # warm after install
                times[name].append(per_call_ns(compiled, x, args.calls))
                if watcher is not None:
                    watcher.close()
    print(f"torch {torch.__version__}, {args.rounds} rounds x {args.calls} calls of a compiled "
          f"x * 2 + 1, recording (ns per call, median of rounds)")
    median = {name: statistics.median(v) for name, v in times.items()}
    for name, v in times.items():
        print(f"  {name:12s} {median[name]:9.0f}   rounds {' '.join(f'{t:.0f}' for t in v)}")
    print(f"guards on - off: {median['guards on'] - median['guards off']:+.0f} ns per call; "
          f"off - no watcher: {median['guards off'] - median['no watcher']:+.0f} ns")

    # The planted frame: gpuprobe's guard range per call beside torch.profiler's cache lookup.
    from torch.profiler import ProfilerActivity, profile
    compiled_planted = torch.compile(planted)
    xs = [torch.randn(4) for _ in range(args.tensors)]
    watcher = gt.watch_compile(cache_keys=False)
    compiled_planted(xs)
    compiled_planted(xs)
    with gpuprobe.Session(f"chrome={out}/planted.json"):
        for _ in range(50):
            compiled_planted(xs)
    watcher.close()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(50):
            compiled_planted(xs)
    prof.export_chrome_trace(f"{out}/kineto.json")

    def durations(path, match):
        data = json.load(open(path))
        events = data["traceEvents"] if isinstance(data, dict) else data
        return [e["dur"] for e in events if match(e.get("name", ""))]

    ours = durations(f"{out}/planted.json", lambda n: n.startswith("dynamo guards"))
    lookups = durations(f"{out}/kineto.json", lambda n: n == "TorchDynamo Cache Lookup")
    print(f"a frame guarding {args.tensors} tensors, 50 calls each way (us per call, median): "
          f"gpuprobe's guard range {statistics.median(ours):.1f} ({len(ours)} ranges); "
          f"torch.profiler's cache lookup {statistics.median(lookups):.1f} ({len(lookups)})")


if __name__ == "__main__":
    sys.exit(main())
