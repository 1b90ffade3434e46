"""Where an arm of always_on_cost.py spends its extra time per request, in Python calls: the
same loop under cProfile in each arm, and per function the calls per request that differ from a
reference arm. Call counts do not move with the machine's load, so a difference of one call per
request shows where timing differs by a few microseconds (a torch path a watcher turns on, a
hook run per kernel launch).

    python bench/python/always_on_calls.py [--device cuda] [--arms always-on,range+watchers]
                                           [--reference session+range] [--requests 500]
"""
import argparse
import cProfile
import gc
import pathlib
import pstats
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402

from always_on_cost import ARMS, Service, arm  # noqa: E402


def calls_per_function(service, name, args, dumps):
    """{function: calls} in --requests requests of the arm, after an unprofiled warm start, with
    the garbage collector's passes per generation in those requests under "gc pass, generation
    N" (a GC callback runs from inside the interpreter, where cProfile does not see it)."""
    passes = [0, 0, 0]

    def count(phase, info):
        if phase == "start":
            passes[info["generation"]] += 1

    with arm(name, service, dumps):
        for _ in range(50):
            service.predict(args.batch, args.seq, 0)
        profile = cProfile.Profile()
        gc.callbacks.append(count)
        profile.enable()
        for _ in range(args.requests):
            service.predict(args.batch, args.seq, 0)
        profile.disable()
        gc.callbacks.remove(count)
    calls = {f"{path.split('site-packages/')[-1]}:{line}:{function}": stats[1]
             for (path, line, function), stats in pstats.Stats(profile).stats.items()}
    calls.update({f"gc pass, generation {g}": n for g, n in enumerate(passes)})
    return calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--arms", default="always-on,range+watchers")
    parser.add_argument("--reference", default="session+range")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    args = parser.parse_args()
    names = args.arms.split(",")
    unknown = [n for n in names + [args.reference] if n not in ARMS]
    if unknown:
        raise SystemExit(f"unknown arms {unknown}; of: {', '.join(ARMS)}")
    torch.set_num_threads(1)
    service = Service(args.device, "inductor")
    for _ in range(100):  # the compile, then the first runs' one-time work
        service.predict(args.batch, args.seq, 0)
    dumps = tempfile.mkdtemp(prefix="gpuprobe-calls-")
    reference = calls_per_function(service, args.reference, args, dumps)
    print(f"{args.reference}: " + ", ".join(
        f"{reference[f'gc pass, generation {g}'] / args.requests:.3f} generation-{g} GC passes"
        for g in range(3)) + " per request")
    for name in names:
        counts = calls_per_function(service, name, args, dumps)
        print(f"== {name} against {args.reference}, {args.device}: Python calls per request that "
              f"differ (cProfile, {args.requests} requests each)")
        differ = sorted(((counts.get(k, 0) - reference.get(k, 0)) / args.requests, k)
                        for k in set(counts) | set(reference))
        for per_request, function in differ:
            if abs(per_request) >= 0.01:
                print(f"  {per_request:+8.2f}  {function}")


if __name__ == "__main__":
    main()
