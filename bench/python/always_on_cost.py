"""What always-on gpuprobe costs a serving loop, measured in one process so that nothing but
gpuprobe differs between the arms: examples/serving's Service (the compiled model, one range per
request) called in a closed loop, slice by slice, with gpuprobe

    off            no session, no watchers; the request's range a contextlib.nullcontext
    off-again      the same, a second time each round: what two slices of the same code differ
                   by here (the benchmark's floor; its intervals should hold 1.0)
    always-on      the README's production config as a Session — metrics=, flight=60, dump=, a
                   P99 trigger too high to fire — with gpuprobe.watch_gc() and
                   gpuprobe.torch.watch_compile(), the request's range gpuprobe.range
    always-on-nvtx-off  the same with the session's nvtx=off
    session+range  the same session and range, without the two watchers
    session+range+gc, session+range+compile  the same with one of the two watchers
    session        the session alone (its threads running, nothing recorded by the loop)
    range+watchers the range and the two watchers with no session (their Python side only)
    always-on+cupti, always-on+between-bursts (GPU): inside a GPU burst and between two

each round in an order rotated and reversed every round, every slice after a short untimed warm
start. Without HTTP between the load and the model, the cost is a larger share of a request
than behind a server: the stricter test.

Two measures per arm against `off` in the same round. Throughput: requests per slice, the mean
of the rounds' ratios with a 95 % bootstrap interval. On shared machines it moves by 5-15 %
between slices of the same code: a core slowed for a while, a stall. Per request: the lower
quartile of the slice's request times, the median of the rounds' ratios with its interval: it
moves by under 1 % between slices, so a cost gpuprobe adds to every request shows there. What a
per-request measure cannot see, gpuprobe's own threads (collector, flight recorder, metrics
server) taking a CPU from the program, is bounded by their CPU time in the always-on slices,
from the kernel's per-thread accounting (/proc/self/task/*/schedstat). The two together bound
always-on's throughput cost.

    python bench/python/always_on_cost.py [--rounds 40] [--slice 0.5] [--device cuda] [--arms ...]
"""
import argparse
import contextlib
import json
import os
import pathlib
import shutil
import socket
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "serving"))

import torch  # noqa: E402

import gpuprobe  # noqa: E402
import gpuprobe.torch  # noqa: E402
from server import Service  # noqa: E402
from interleaved import bootstrap_mean, quantile  # noqa: E402

ALWAYS_ON = "metrics=127.0.0.1:{port},flight=60,dump={dumps},trigger=p99:request>1s/10s"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def own_threads_cpu_ns():
    """CPU time so far of this process's threads that are gpuprobe's (named gpuprobe*, the
    metrics server's gpuprobe-http included), in nanoseconds."""
    total = 0
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            if name.startswith("gpuprobe"):
                total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread ended meanwhile
    return total


def pin_to_cores(spec):
    """Runs this process on the cores `spec` names ("2-5", "1"); all of them when it is None."""
    if spec:
        first, _, last = spec.partition("-")
        os.sched_setaffinity(0, range(int(first), int(last or first) + 1))


def closed_loop(service, seconds, batch, seq, times=None):
    """Requests answered in `seconds`; each one's time (ns, the loop's own step included, the
    same in every arm) appended to `times` when given."""
    clock = time.perf_counter_ns
    last = clock()
    end = last + int(seconds * 1e9)
    n = 0
    while last < end:
        service.predict(batch, seq, 0)
        now = clock()
        if times is not None:
            times.append(now - last)
        last = now
        n += 1
    return n


# Each arm: (its session's config or None for no session, whether the request's range is
# gpuprobe.range, whether gpuprobe.watch_gc() is on, whether gpuprobe.torch.watch_compile() is).
ARMS = {
    "off": (None, False, False, False),
    "off-again": (None, False, False, False),
    "always-on": (ALWAYS_ON, True, True, True),
    # the same without NVTX: gpuprobe's ranges not handed to an NVTX tool (CUPTI, Nsight)
    "always-on-nvtx-off": (ALWAYS_ON + ",nvtx=off", True, True, True),
    # parts of always-on, to take a cost apart: the session and the range without the two
    # watchers, or with one of them; the session alone (its threads, nothing recorded by the
    # loop); the range and the watchers with no session (their Python-side cost, nothing recorded)
    "session+range": (ALWAYS_ON, True, False, False),
    "session+range+gc": (ALWAYS_ON, True, True, False),
    "session+range+compile": (ALWAYS_ON, True, False, True),
    "session": (ALWAYS_ON, False, False, False),
    "range+watchers": (None, True, True, True),
    # GPU activity recorded throughout: what the program pays inside a burst
    "always-on+cupti": (ALWAYS_ON + ",cupti=all", True, True, True),
    # gpu_burst= with the session's first burst (50 ms, at its start) and its release inside the
    # untimed warm start: the timed slice is what the program pays between bursts
    "always-on+between-bursts": (ALWAYS_ON + ",cupti=all,gpu_burst=50ms/60s", True, True, True),
}
BURST_ON_S, BURST_EVERY_S = 1.0, 60.0  # the README's production burst: 1 s in every 60


@contextlib.contextmanager
def arm(name, service, dumps):
    config, with_range, gc_watcher, compile_watcher = ARMS[name]
    off = lambda _name: contextlib.nullcontext()  # noqa: E731
    session = (gpuprobe.Session(config.format(port=free_port(), dumps=dumps))
               if config is not None else None)
    if gc_watcher:
        gpuprobe.watch_gc()
    if compile_watcher:
        watcher = gpuprobe.torch.watch_compile()
    service.range = gpuprobe.range if with_range else off
    try:
        yield
    finally:
        service.range = off
        if compile_watcher:
            watcher.close()
        if gc_watcher:
            gpuprobe.unwatch_gc()
        if session is not None:
            session.stop()


def slice_stats(times):
    """(requests, the 25th percentile and the median of the request times in ns, the share of the
    slice's time in stalls). A stall is a request over 5x the slice's median — a GC pass, a page fault, the
    machine taking the core away for a while — which comes in every arm (the A/A arm has them)
    and makes the requests counted per slice vary by 5-15 % on shared machines; the lower
    quartile of the request times moves by under 1 % between slices of the same code, so a cost
    gpuprobe adds to each request shows there."""
    ordered = sorted(times)
    median = ordered[len(ordered) // 2]
    stalled = sum(t for t in times if t > 5 * median)
    return len(times), ordered[len(ordered) // 4], median, stalled / max(sum(times), 1)


def ratio_row(values, base):
    """Per-round ratios values/base: their mean and median, each with a 95 % interval."""
    ratios = [v / b for v, b in zip(values, base)]
    return {"median": statistics.median(ratios),
            "median_ci95": list(bootstrap_mean(ratios, statistic=statistics.median)),
            "mean": statistics.fmean(ratios), "mean_ci95": list(bootstrap_mean(ratios)),
            "q1": quantile(ratios, 0.25), "q3": quantile(ratios, 0.75), "ratios": ratios}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--slice", type=float, default=0.5, help="seconds per arm per round")
    parser.add_argument("--warm", type=float, default=0.15, help="untimed seconds before each")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--threads", type=int, default=1, help="torch's intra-op threads")
    parser.add_argument("--cpus", help="run on these cores only, e.g. 2-5")
    parser.add_argument("--arms", help="comma-separated, of: " + ", ".join(ARMS) +
                        " (default: off, off-again, always-on, and on the GPU the two burst arms)")
    parser.add_argument("--json", help="write the result here too")
    parser.add_argument("--max-seconds", type=float,
                        help="start no round after this many seconds: fewer rounds, a result")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pin_to_cores(args.cpus)
    if "GPUPROBE" in os.environ:
        raise SystemExit("unset GPUPROBE: the arms start their own sessions")
    names = (args.arms.split(",") if args.arms else
             ["off", "off-again", "always-on"] +
             (["always-on+cupti", "always-on+between-bursts"] if args.device == "cuda" else []))
    unknown = [n for n in names if n not in ARMS]
    if unknown or "off" not in names:
        raise SystemExit(f"--arms: unknown {unknown}; 'off' is the baseline and must be one")
    work = tempfile.mkdtemp(prefix="gpuprobe-always-on-")
    try:
        service = Service(args.device, args.backend)
        service.predict(args.batch, args.seq, 0)  # the compile
        closed_loop(service, 2.0, args.batch, args.seq)
        counts = {n: [] for n in names}
        lower_quartiles = {n: [] for n in names}
        stalls = {n: [] for n in names}
        slices = []  # every slice, for a look at what moves them (--json)
        own_ns, own_wall = 0, 0.0  # gpuprobe's threads' CPU time in the always-on slices
        began = time.monotonic()
        for r in range(args.rounds):
            if args.max_seconds and r >= 2 and time.monotonic() - began > args.max_seconds:
                print(f"--max-seconds: {r} of {args.rounds} rounds", file=sys.stderr)
                args.rounds = r
                break
            if r % 10 == 0:
                print(f"round {r} at {time.monotonic() - began:.0f} s", file=sys.stderr)
            order = names[r % len(names):] + names[:r % len(names)]
            if r % 2:
                order.reverse()
            for name in order:
                times = []
                with arm(name, service, os.path.join(work, "dumps")):
                    closed_loop(service, args.warm, args.batch, args.seq)
                    before, start = own_threads_cpu_ns(), time.perf_counter()
                    at, cpu = time.time(), time.thread_time()
                    closed_loop(service, args.slice, args.batch, args.seq, times)
                    cpu = (time.thread_time() - cpu) / (time.perf_counter() - start)
                    if name == "always-on":
                        own_wall += time.perf_counter() - start
                        own_ns += own_threads_cpu_ns() - before
                n, lower_quartile, median, stalled = slice_stats(times)
                counts[name].append(n)
                lower_quartiles[name].append(lower_quartile)
                stalls[name].append(stalled)
                slices.append({"arm": name, "round": r, "unix_s": at, "requests": n,
                               "q1_us": lower_quartile / 1e3,
                               "median_us": median / 1e3,
                               "serving_thread_cpu_share": cpu})
        dumps = list(pathlib.Path(work, "dumps").glob("gpuprobe_dump_*"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"{args.rounds} rounds of {args.slice} s per arm, one closed loop in process, "
          f"{args.device}, batch {args.batch} x seq {args.seq}, {args.threads} torch thread(s), "
          f"cores {args.cpus or 'all'}; "
          f"off: {statistics.median(counts['off']) / args.slice:.1f} requests/s, a request's lower "
          f"quartile {statistics.median(lower_quartiles['off']) / 1e3:.1f} us")
    print("throughput: requests per slice / the off slice's of the same round (mean over rounds); "
          "per request: the off slice's lower quartile of request times / the arm's (median over "
          "rounds); both above 1: faster; stalls: the share of the slice in requests over 5x "
          "its median")
    print(f"{'arm':25} {'req/s':>8} {'throughput':>10} {'95% of mean':>15} {'per request':>11} "
          f"{'95% of median':>15} {'stalls':>7}")
    result = {"args": vars(args), "arms": {}, "slices": slices}
    for name in names:
        throughput = ratio_row(counts[name], counts["off"])
        throughput["pooled"] = sum(counts[name]) / sum(counts["off"])
        per_request = ratio_row(lower_quartiles["off"], lower_quartiles[name])
        stall = statistics.fmean(stalls[name])
        result["arms"][name] = {"requests_per_s": statistics.median(counts[name]) / args.slice,
                                "throughput": throughput, "per_request": per_request,
                                "stall_share": stall}
        t, q = throughput, per_request
        print(f"{name:25} {statistics.median(counts[name]) / args.slice:8.1f} {t['mean']:10.4f} "
              f"{t['mean_ci95'][0]:7.4f}..{t['mean_ci95'][1]:.4f} {q['median']:11.4f} "
              f"{q['median_ci95'][0]:7.4f}..{q['median_ci95'][1]:.4f} {100 * stall:6.2f}%")
    arms = result["arms"]
    if "always-on+cupti" in arms and "always-on+between-bursts" in arms:
        # gpu_burst=1s/60s: a second of recording (the cupti arm's cost) in every sixty, the rest
        # between bursts; each cost is 1 - ratio.
        duty = BURST_ON_S / BURST_EVERY_S
        for measure, estimate in (("throughput", "mean"), ("per_request", "median")):
            inside = 1 - arms["always-on+cupti"][measure][estimate]
            between = 1 - arms["always-on+between-bursts"][measure][estimate]
            arms.setdefault("gpu_burst=1s/60s", {})[measure] = duty * inside + (1 - duty) * between
        weighted = arms["gpu_burst=1s/60s"]
        print(f"always-on with gpu_burst=1s/60s (1/60 of the cupti arm's cost + 59/60 of the "
              f"between-bursts arm's): throughput cost {100 * weighted['throughput']:.2f} %, "
              f"per request {100 * weighted['per_request']:.2f} %")
    served = sum(counts["always-on"]) if "always-on" in counts else 0
    if served:
        share = own_ns * 1e-9 / own_wall
        result["own_threads"] = {"cpu_share_of_a_core": share,
                                 "cpu_us_per_request": own_ns * 1e-3 / served,
                                 "request_us": own_wall * 1e6 / served}
        print(f"gpuprobe's own threads in the always-on slices: {own_ns * 1e-6:.1f} ms CPU in "
              f"{own_wall:.1f} s ({100 * share:.3f} % of one core), "
              f"{own_ns * 1e-3 / served:.2f} us per request of {own_wall * 1e6 / served:.0f} us")
        # What always-on can take from the serving thread: the time it adds to each request (the
        # upper end of the per-request interval) and, at most, all the CPU time of gpuprobe's own
        # threads, were every microsecond of it taken from the serving thread's core.
        added = 1 - arms["always-on"]["per_request"]["median_ci95"][0]
        bound = max(added, 0.0) + share
        result["always_on_bound"] = {"per_request_added_ci_high": added,
                                     "own_threads_share": share, "bound": bound}
        print(f"always-on's cost, bounded: at most {100 * max(added, 0):.2f} % added to each "
              f"request (the interval's end) + at most {100 * share:.2f} % taken by gpuprobe's "
              f"threads = <= {100 * bound:.2f} % of the loop's throughput")
    print(f"dumps written: {len(dumps)} (the trigger must not fire)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
