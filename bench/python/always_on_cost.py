"""What always-on gpuprobe costs a serving loop, measured in one process so that nothing but
gpuprobe differs between the arms: examples/serving's Service (the compiled model, one range per
request) called in a closed loop, slice by slice, with gpuprobe

    off         no session, no watchers; the request's range a contextlib.nullcontext
    off-again   the same, a second time each round: what two slices of the same code differ by
                here (the benchmark's floor; its interval should hold 1.0)
    always-on   the README's production config as a Session — metrics=, flight=60, dump=, a
                P99 trigger too high to fire — with gpuprobe.watch_gc() and
                gpuprobe.torch.watch_compile(), the request's range gpuprobe.range

each round in an order rotated and reversed every round, every slice after a short untimed warm
start. Without HTTP between the load and the model, the cost is a larger share of a request
than behind a server: the stricter test. Per arm: requests per second, the ratio to `off` in the
same round (median, quartiles), the pooled ratio (all requests over all rounds), and a 95 %
interval of the mean ratio (bootstrap over rounds). Besides, what gpuprobe's own threads (the
collector, the flight recorder's, the metrics server's) spent on a CPU during the always-on
slices, from the kernel's per-thread accounting (/proc/self/task/*/schedstat): a cost too small
for the throughput ratio to resolve is still measured there, per second and per request.

    python bench/python/always_on_cost.py [--rounds 40] [--slice 0.5] [--device cuda]
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
    """CPU time so far of this process's threads that are gpuprobe's (named gpuprobe*, and the
    metrics server's civetweb-* threads), in nanoseconds."""
    total = 0
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            if name.startswith(("gpuprobe", "civetweb")):
                total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread ended meanwhile
    return total


def closed_loop(service, seconds, batch, seq):
    """Requests answered in `seconds`."""
    n = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        service.predict(batch, seq, 0)
        n += 1
    return n


@contextlib.contextmanager
def arm(name, service, dumps):
    off = lambda _name: contextlib.nullcontext()  # noqa: E731
    if name != "always-on":
        service.range = off
        yield
        return
    session = gpuprobe.Session(ALWAYS_ON.format(port=free_port(), dumps=dumps))
    gpuprobe.watch_gc()
    watcher = gpuprobe.torch.watch_compile()
    service.range = gpuprobe.range
    try:
        yield
    finally:
        service.range = off
        watcher.close()
        gpuprobe.unwatch_gc()
        session.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--slice", type=float, default=0.5, help="seconds per arm per round")
    parser.add_argument("--warm", type=float, default=0.1, help="untimed seconds before each")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--threads", type=int, default=1, help="torch's intra-op threads")
    parser.add_argument("--cpus", help="run on these cores only, e.g. 2-5")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.cpus:
        first, _, last = args.cpus.partition("-")
        os.sched_setaffinity(0, range(int(first), int(last or first) + 1))
    if "GPUPROBE" in os.environ:
        raise SystemExit("unset GPUPROBE: the arms start their own sessions")
    names = ["off", "off-again", "always-on"]
    work = tempfile.mkdtemp(prefix="gpuprobe-always-on-")
    try:
        service = Service(args.device, args.backend)
        service.predict(args.batch, args.seq, 0)  # the compile
        closed_loop(service, 2.0, args.batch, args.seq)
        counts = {n: [] for n in names}
        own_ns, own_wall = 0, 0.0  # gpuprobe's threads' CPU time in the always-on slices
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            if r % 2:
                order.reverse()
            for name in order:
                with arm(name, service, os.path.join(work, "dumps")):
                    closed_loop(service, args.warm, args.batch, args.seq)
                    before, start = own_threads_cpu_ns(), time.perf_counter()
                    counts[name].append(closed_loop(service, args.slice, args.batch, args.seq))
                    if name == "always-on":
                        own_wall += time.perf_counter() - start
                        own_ns += own_threads_cpu_ns() - before
        dumps = list(pathlib.Path(work, "dumps").glob("gpuprobe_dump_*"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    base = counts["off"]
    print(f"{args.rounds} rounds of {args.slice} s per arm, one closed loop in process, "
          f"{args.device}, batch {args.batch} x seq {args.seq}, {args.threads} torch thread(s), "
          f"cores {args.cpus or 'all'}; "
          f"off: {statistics.median(base) / args.slice:.1f} requests/s")
    print(f"{'arm':12} {'req/s':>9} {'x off (median)':>15} {'quartiles':>17} {'pooled':>8} "
          f"{'95% of mean':>17}")
    result = {}
    for name in names:
        ratios = [c / b for c, b in zip(counts[name], base)]
        pooled = sum(counts[name]) / sum(base)
        low, high = bootstrap_mean(ratios)
        print(f"{name:12} {statistics.median(counts[name]) / args.slice:9.1f} "
              f"{statistics.median(ratios):15.4f} {quantile(ratios, 0.25):8.4f}.."
              f"{quantile(ratios, 0.75):.4f} {pooled:8.4f} {low:8.4f}..{high:.4f}")
        result[name] = {"requests_per_s": statistics.median(counts[name]) / args.slice,
                        "ratio": statistics.median(ratios), "pooled": pooled,
                        "mean_ci95": [low, high], "ratios": ratios}
    served = sum(counts["always-on"])
    result["own_threads"] = {"cpu_share_of_a_core": own_ns * 1e-9 / own_wall,
                             "cpu_us_per_request": own_ns * 1e-3 / served,
                             "request_us": own_wall * 1e6 / served}
    print(f"gpuprobe's own threads in the always-on slices: {own_ns * 1e-6:.1f} ms CPU in "
          f"{own_wall:.1f} s ({100 * own_ns * 1e-9 / own_wall:.3f} % of one core), "
          f"{own_ns * 1e-3 / served:.2f} us per request of {own_wall * 1e6 / served:.0f} us")
    print(f"dumps written: {len(dumps)} (the trigger must not fire)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
