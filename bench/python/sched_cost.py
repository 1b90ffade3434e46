"""What sched=1ms costs a multi-threaded Python service: THREADS worker threads, each serving
requests in a loop (a range "request" around some hashing, which releases the GIL, some Python,
which holds it, and a short sleep), recorded by the same session with and without the
scheduler sampler:

    sched=off        chrome=TRACE,sched=off (the baseline)
    sched=off-again  the same, a second time each round: what two slices of the same code differ
                     by here (the benchmark's floor; its intervals should hold 1.0)
    sched=1ms        chrome=TRACE,sched=1ms

each round in an order rotated and reversed every round, every slice after a short untimed warm
start, the workers alive throughout (started before the first session, as a service's are).
Per arm and round, against sched=off in the same round: throughput (requests finished in the
slice, all threads), the mean of the rounds' ratios with a 95 % bootstrap interval and their
range; per request, the slice's lower quartile of request times (the median of the rounds'
ratios, with its interval). What the sampler takes from the machine: the CPU time of its thread
(gpuprobe-sched) and of all gpuprobe's threads (the collector writes the counters it records)
during the timed slices, from /proc/self/task/*/schedstat, as a share of one core.

    python bench/python/sched_cost.py [--rounds 20] [--slice 0.5] [--threads 6] [--json OUT]
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading
import time

import gpuprobe

from interleaved import bootstrap_mean, quantile

ARMS = {"sched=off": "sched=off", "sched=off-again": "sched=off", "sched=1ms": "sched=1ms"}
BASELINE = "sched=off"
BUFFER = bytes(16 << 10)


def threads_cpu_ns():
    """{thread name: CPU ns so far} of this process's threads whose names start "gpuprobe"."""
    out = {}
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            if name.startswith("gpuprobe"):
                out[name] = out.get(name, 0) + int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # the thread ended meanwhile
    return out


def cpu_since(before, after, name=None):
    """CPU ns between two threads_cpu_ns() readings: of thread `name`, or of all of them."""
    names = [name] if name is not None else set(before) | set(after)
    return sum(max(after.get(n, 0) - before.get(n, 0), 0) for n in names)


class Workers:
    """Threads that serve requests while a slice is open and wait between slices."""

    def __init__(self, n, compute_s, python_s, sleep_s):
        self.compute_s, self.python_s, self.sleep_s = compute_s, python_s, sleep_s
        self.go, self.done = threading.Event(), threading.Semaphore(0)
        self.quit = False
        self.times = [[] for _ in range(n)]
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True)
                        for i in range(n)]
        for t in self.threads:
            t.start()

    def _request(self):
        h, end = hashlib.sha256(), time.thread_time() + self.compute_s
        while time.thread_time() < end:
            h.update(BUFFER)
        end = time.thread_time() + self.python_s
        while time.thread_time() < end:
            pass
        time.sleep(self.sleep_s)

    def _run(self, i):
        gpuprobe.set_thread_name(f"worker {i + 1}")
        clock = time.perf_counter_ns
        while True:
            self.go.wait()
            if self.quit:
                return
            times = self.times[i]
            while self.go.is_set():
                start = clock()
                with gpuprobe.range("request"):
                    self._request()
                times.append(clock() - start)
            self.done.release()

    def slice(self, seconds):
        """Every request time (ns) of a slice of `seconds`, the last ones finished after it."""
        for t in self.times:
            t.clear()
        self.go.set()
        time.sleep(seconds)
        self.go.clear()
        for _ in self.threads:
            self.done.acquire()
        return [x for t in self.times for x in t]

    def stop(self):
        self.quit = True
        self.go.set()
        for t in self.threads:
            t.join()


def ratio_row(values, base):
    """Per-round ratios values/base: mean and median, each with a 95 % interval, and range."""
    ratios = [v / b for v, b in zip(values, base)]
    return {"mean": statistics.fmean(ratios), "mean_ci95": list(bootstrap_mean(ratios)),
            "median": statistics.median(ratios),
            "median_ci95": list(bootstrap_mean(ratios, statistic=statistics.median)),
            "min": min(ratios), "max": max(ratios), "ratios": ratios}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--slice", type=float, default=0.5, help="seconds per arm per round")
    parser.add_argument("--warm", type=float, default=0.1, help="untimed seconds before each")
    parser.add_argument("--threads", type=int, default=6, help="worker threads")
    parser.add_argument("--compute-us", type=float, default=300, help="hashing per request")
    parser.add_argument("--python-us", type=float, default=100, help="Python per request")
    parser.add_argument("--sleep-us", type=float, default=500, help="sleep per request")
    parser.add_argument("--json", help="write the result here too")
    args = parser.parse_args()
    if "GPUPROBE" in os.environ:
        raise SystemExit("unset GPUPROBE: the arms start their own sessions")
    names = list(ARMS)
    workers = Workers(args.threads, args.compute_us * 1e-6, args.python_us * 1e-6,
                      args.sleep_us * 1e-6)
    work = tempfile.mkdtemp(prefix="gpuprobe-sched-cost-")
    counts = {n: [] for n in names}
    lower_quartiles = {n: [] for n in names}
    sampler_ns = {n: 0 for n in names}
    own_ns = {n: 0 for n in names}
    wall_s = {n: 0.0 for n in names}
    sampled = 0  # the process's threads during a sched=1ms slice, the sampler's included
    try:
        workers.slice(1.0)  # warm: imports, the first allocations
        began = time.monotonic()
        for r in range(args.rounds):
            if r % 5 == 0:
                print(f"round {r} at {time.monotonic() - began:.0f} s", file=sys.stderr)
            order = names[r % len(names):] + names[:r % len(names)]
            if r % 2:
                order.reverse()
            for name in order:
                trace = os.path.join(work, "t.json")
                with gpuprobe.Session(f"chrome={trace},{ARMS[name]}"):
                    workers.slice(args.warm)
                    before, start = threads_cpu_ns(), time.perf_counter()
                    times = workers.slice(args.slice)
                    after, took = threads_cpu_ns(), time.perf_counter() - start
                    if ARMS[name] != "sched=off":
                        sampled = len(os.listdir("/proc/self/task"))
                os.unlink(trace)
                counts[name].append(len(times))
                lower_quartiles[name].append(quantile(times, 0.25))
                sampler_ns[name] += cpu_since(before, after, "gpuprobe-sched")
                own_ns[name] += cpu_since(before, after)
                wall_s[name] += took
    finally:
        workers.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(f"{args.rounds} rounds of {args.slice} s per arm, {args.threads} worker threads, each "
          f"request {args.compute_us:.0f} us hashing + {args.python_us:.0f} us Python + "
          f"{args.sleep_us:.0f} us sleep, {os.cpu_count()} CPUs, {sampled} threads in the "
          f"process; {BASELINE}: "
          f"{statistics.median(counts[BASELINE]) / args.slice:.0f} requests/s, a request's lower "
          f"quartile {statistics.median(lower_quartiles[BASELINE]) / 1e3:.0f} us")
    print(f"throughput: requests per slice / {BASELINE}'s of the same round (mean over rounds, "
          f"its 95 % interval, the rounds' range); per request: {BASELINE}'s lower quartile of "
          f"request times / the arm's (median over rounds); both above 1: faster; CPU: "
          f"gpuprobe-sched's and all gpuprobe threads' CPU time in the timed slices, % of a core")
    print(f"{'arm':16} {'req/s':>7} {'throughput':>10} {'95% of mean':>15} {'range':>13} "
          f"{'per request':>11} {'95% of median':>15} {'sampler':>8} {'gpuprobe':>8}")
    result = {"args": vars(args), "threads_in_process": sampled, "arms": {}}
    for name in names:
        throughput = ratio_row(counts[name], counts[BASELINE])
        per_request = ratio_row(lower_quartiles[BASELINE], lower_quartiles[name])
        sampler = 100 * sampler_ns[name] * 1e-9 / wall_s[name]
        own = 100 * own_ns[name] * 1e-9 / wall_s[name]
        result["arms"][name] = {"requests_per_s": statistics.median(counts[name]) / args.slice,
                                "throughput": throughput, "per_request": per_request,
                                "sampler_pct_of_core": sampler, "gpuprobe_pct_of_core": own}
        t, q = throughput, per_request
        print(f"{name:16} {statistics.median(counts[name]) / args.slice:7.0f} {t['mean']:10.4f} "
              f"{t['mean_ci95'][0]:7.4f}..{t['mean_ci95'][1]:.4f} "
              f"{t['min']:6.3f}..{t['max']:.3f} {q['median']:11.4f} "
              f"{q['median_ci95'][0]:7.4f}..{q['median_ci95'][1]:.4f} {sampler:7.2f}% {own:7.2f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
