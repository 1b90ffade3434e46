"""What each per-request part of always-on gpuprobe adds to a request, in nanoseconds, measured
in short blocks of requests that alternate within one process and one session: the machine's
drift (on a shared GPU host a request's time moves by 30 % over minutes, always_on_cost.py's
slices by 1-2 %) cancels between neighbouring blocks, a few microseconds apart.

The parts, each block a few requests of examples/serving's Service:

    off              the request's range a contextlib.nullcontext, Inductor's compiled graph
                     called as torch made it
    off again        the same, a second time each round (the A/A: its interval should hold 0)
    request range    the request inside gpuprobe.range("request")
    + graph range    and each compiled graph's run inside the range "compiled graph (forward)"
                     (gpuprobe.torch.watch_compile()'s wrapper of CompiledFxGraph.__call__)

in two phases: with no session (the Python side only, nothing recorded) and in the README's
always-on session with watch_gc() and watch_compile() on (what the serving thread pays). What
this cannot show, a session's threads taking a core, always_on_cost.py bounds by their CPU time.

    python bench/python/always_on_parts.py [--device cuda] [--rounds 2000] [--block 20]
        [--phases both|session|none]
"""
import argparse
import contextlib
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402

import gpuprobe  # noqa: E402
import gpuprobe.torch  # noqa: E402
from always_on_cost import ALWAYS_ON, Service, free_port, pin_to_cores  # noqa: E402
from interleaved import bootstrap_mean  # noqa: E402

PARTS = ("off", "off again", "request range", "+ graph range")


def no_range(_name):
    return contextlib.nullcontext()


@contextlib.contextmanager
def phase(with_session, dumps):
    """The phase's session (or none) and both watchers; yields (the class whose __call__ is
    swapped, torch's __call__, the watcher's)."""
    from torch._inductor.output_code import CompiledFxGraph

    original = CompiledFxGraph.__call__
    session = (gpuprobe.Session(ALWAYS_ON.format(port=free_port(), dumps=dumps))
               if with_session else None)
    gpuprobe.watch_gc()
    watcher = gpuprobe.torch.watch_compile()
    wrapped = CompiledFxGraph.__call__
    if wrapped is original:
        raise SystemExit("watch_compile() did not wrap CompiledFxGraph.__call__ in this torch")
    try:
        yield CompiledFxGraph, original, wrapped
    finally:
        CompiledFxGraph.__call__ = wrapped  # as the watcher left it, for its close()
        watcher.close()
        gpuprobe.unwatch_gc()
        if session is not None:
            session.stop()


def block_median_ns(service, args):
    clock = time.perf_counter_ns
    times = []
    last = clock()
    for _ in range(args.block):
        service.predict(args.batch, args.seq, 0)
        now = clock()
        times.append(now - last)
        last = now
    return statistics.median(times)


def measure(service, args, with_session, dumps):
    """{part: [the block's median request time in ns, one per round]}."""
    samples = {p: [] for p in PARTS}
    with phase(with_session, dumps) as (cls, original, wrapped):
        settings = {"off": (no_range, original), "off again": (no_range, original),
                    "request range": (gpuprobe.range, original),
                    "+ graph range": (gpuprobe.range, wrapped)}
        for _ in range(50):  # the first runs through the wrapper work out what it keeps
            service.predict(args.batch, args.seq, 0)
        for r in range(args.rounds):
            order = PARTS[r % len(PARTS):] + PARTS[:r % len(PARTS)]
            for part in (order if r % 2 == 0 else tuple(reversed(order))):
                service.range, cls.__call__ = settings[part]
                samples[part].append(block_median_ns(service, args))
        service.range = no_range
    return samples


def report(service, args, dumps):
    """Both phases' parts, each as the time it adds to a request against its reference."""
    for with_session in {"both": (False, True), "session": (True,), "none": (False,)}[args.phases]:
        samples = measure(service, args, with_session, dumps)
        off = statistics.median(samples["off"])
        name = "the always-on session" if with_session else "no session (nothing recorded)"
        print(f"== {name}, watch_gc, watch_compile: off {off / 1e3:.1f} us per request")
        for part, base in (("off again", "off"), ("request range", "off"), ("+ graph range", "off"),
                           ("+ graph range", "request range")):
            added = [a - b for a, b in zip(samples[part], samples[base])]
            lo, hi = bootstrap_mean(added, statistic=statistics.median)
            print(f"  {part + ' - ' + base:32} {statistics.median(added):+8.0f} ns "
                  f"({lo:+.0f}..{hi:+.0f})  {100 * statistics.median(added) / off:+6.2f} % of a request")



def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--block", type=int, default=20, help="requests per block")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--cpus", help="run on these cores only, e.g. 2-5")
    parser.add_argument("--phases", choices=("both", "session", "none"), default="both",
                        help="with no session, in the always-on session, or both (default)")
    args = parser.parse_args()
    pin_to_cores(args.cpus)
    torch.set_num_threads(1)
    service = Service(args.device, "inductor")
    for _ in range(200):  # the compile, then the first runs' one-time work
        service.predict(args.batch, args.seq, 0)
    dumps = tempfile.mkdtemp(prefix="gpuprobe-parts-")
    print(f"{args.rounds} rounds of one {args.block}-request block per part, {args.device}, "
          f"batch {args.batch} x seq {args.seq}; per part: the block's median request time minus "
          f"the off block's of the same round, the median over rounds (95 % interval)")
    try:
        report(service, args, dumps)
    finally:
        shutil.rmtree(dumps, ignore_errors=True)


if __name__ == "__main__":
    main()
