"""What always-on gpuprobe costs a serving loop: examples/serving/server.py started once per arm
(each its own process, all warm before the first measurement), then driven in turn, slice by
slice, by the same closed-loop load (WORKERS connections, each sending its next request when the
last is answered), the arms' order rotated and reversed every round so that none always follows
another. Per arm and round, throughput (requests answered per second) against the baseline's in
the same round; the median of those ratios over the rounds, with quartiles, and each arm's P50,
P99 and max latency over all its slices.

    python bench/python/serving_cost.py [--rounds 8] [--slice 3] [--arms none,always-on,...]

Arms (always-on is the README's production config: metrics=, flight=60, dump=, a P99 trigger too
high to fire):
    none                    the server never imports gpuprobe
    none-again              a second such server: its ratio to `none` is what two processes of
                            the same program differ by here (the benchmark's floor)
    always-on               metrics=PORT,flight=60,dump=DIR,trigger=p99:request>1s/10s
    always-on+scraper       the same, with a hostile scraper on its metrics port during its
                            slices: 100 GET /metrics a second, one oversized request a second,
                            and from half-way 8 connections left half-open
    always-on+dump          the same, with POST /dump one second into each of its slices (the
                            dump is written while the load runs)
    always-on+gpu-bursts    the same plus cupti=all,gpu_burst=1s/60s (where there is a GPU)
With --pin, the servers share one set of cores and the load generator has another (so that no
arm gets a core the others lack). Besides the median of the rounds' ratios, the ratio of the arm's
requests over all rounds to the baseline's, and a 95 % interval of the rounds' mean ratio
(bootstrap over rounds). Prints a table and one JSON line.
"""
import argparse
import http.client
import json
import os
import pathlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from interleaved import bootstrap_mean, quantile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "serving" / "server.py"
ALWAYS_ON = "metrics={port},flight=60,dump={dumps},trigger=p99:request>1s/10s"
ARMS = {
    "none": None,
    "none-again": None,
    "always-on": ALWAYS_ON,
    "always-on+scraper": ALWAYS_ON,
    "always-on+dump": ALWAYS_ON,
    "always-on+gpu-bursts": ALWAYS_ON + ",cupti=all,gpu_burst=1s/60s",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]






def parse_cpus(text):
    """'0-5,8' -> {0, 1, 2, 3, 4, 5, 8}"""
    cpus = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


class Arm:
    def __init__(self, name, work, device, cpus=None):
        self.name = name
        self.port, self.metrics_port = free_port(), free_port()
        env = dict(os.environ)
        env.pop("GPUPROBE", None)
        args = [sys.executable, str(SERVER), "--port", str(self.port), "--device", device]
        if ARMS[name] is None:
            args.append("--without-gpuprobe")
        else:
            env["GPUPROBE"] = ARMS[name].format(port=self.metrics_port,
                                                dumps=os.path.join(work, name + "-dumps"))
        self.log = open(os.path.join(work, name + ".log"), "w")
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        self.process = subprocess.Popen(args, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        preexec_fn=pin)
        self.ratios, self.ms, self.throughput, self.requests = [], [], [], []
        self.collector_s = 0.0

    def healthy(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def collector_seconds(self):
        if ARMS[self.name] is None:
            return 0.0
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                        timeout=5) as r:
                for line in r.read().decode().splitlines():
                    if line.startswith("gpuprobe_collector_cpu_seconds_total "):
                        return float(line.split()[1])
        except OSError:
            pass
        return 0.0

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def closed_loop(port, workers, seconds, body):
    """Requests answered in `seconds` by `workers` connections, and each one's ms."""
    end = time.perf_counter() + seconds
    latencies = []
    lock = threading.Lock()

    def worker():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        while True:
            start = time.perf_counter()
            if start >= end:
                break
            connection.request("POST", "/predict", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            mine.append((time.perf_counter() - start) * 1000)
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


class HostileScraper:
    """During a slice: 100 scrapes a second and one oversized request a second on the arm's
    metrics port, and from half-way through the slice 8 connections left half-open (a request
    line and a header, never finished)."""

    def __init__(self, port, slice_seconds):
        self.port, self.slice_seconds = port, slice_seconds
        self.stop = threading.Event()
        self.scrapes = self.refused = 0

    def half_open(self, sockets):
        if self.stop.wait(self.slice_seconds / 2):
            return
        for _ in range(8):
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
                sockets.append(s)
            except OSError:
                pass

    def run(self):
        sockets = []
        slow = threading.Thread(target=self.half_open, args=(sockets,))
        slow.start()
        next_big = time.monotonic()
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                            timeout=10) as r:  # Prometheus's scrape timeout
                    r.read()
                self.scrapes += 1
            except OSError:
                self.refused += 1
            if t >= next_big:
                next_big = t + 1
                try:
                    s = socket.create_connection(("127.0.0.1", self.port), timeout=1)
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 65536 +
                              b"\r\n\r\n")
                    s.recv(256)
                    s.close()
                except OSError:
                    pass
            self.stop.wait(max(0.0, 0.01 - (time.monotonic() - t)))
        slow.join()
        for s in sockets:
            s.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default="none,always-on,always-on+scraper,always-on+dump")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--slice", type=float, default=3.0, help="seconds per arm per round")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--pin", metavar="SERVERS/CLIENT",
                        help="cores for the servers and for the load generator, e.g. 2-7/8-11")
    args = parser.parse_args()
    server_cpus = None
    if args.pin:
        servers, _, client = args.pin.partition("/")
        server_cpus = parse_cpus(servers)
        os.sched_setaffinity(0, parse_cpus(client))
    names = args.arms.split(",")
    if names[0] != "none" or any(n not in ARMS for n in names):
        raise SystemExit(f"--arms: 'none' first, then any of {', '.join(list(ARMS)[1:])}")
    work = tempfile.mkdtemp(prefix="gpuprobe-serving-cost-")
    arms = [Arm(n, work, args.device, server_cpus) for n in names]
    body = json.dumps({"batch": args.batch, "seq": args.seq})
    scraped = refused = 0
    try:
        deadline = time.monotonic() + 600
        while not all(a.healthy() for a in arms):
            if time.monotonic() > deadline or any(a.process.poll() is not None for a in arms):
                raise SystemExit("a server did not start: see " + work)
            time.sleep(0.5)
        for a in arms:  # warm: the first requests of a process are slower
            closed_loop(a.port, args.workers, 1.0, body)
        for r in range(args.rounds):
            order = arms[r % len(arms):] + arms[:r % len(arms)]
            if r % 2:
                order.reverse()
            throughput = {}
            for a in order:
                collector_before = a.collector_seconds()
                scraper = None
                if a.name == "always-on+scraper":
                    scraper = HostileScraper(a.metrics_port, args.slice)
                    thread = threading.Thread(target=scraper.run)
                    thread.start()
                if a.name == "always-on+dump":
                    threading.Timer(1.0, lambda a=a: urllib.request.urlopen(urllib.request.Request(
                        f"http://127.0.0.1:{a.metrics_port}/dump?reason=bench", method="POST"),
                        timeout=30).read()).start()
                ms = closed_loop(a.port, args.workers, args.slice, body)
                if scraper is not None:
                    scraper.stop.set()
                    thread.join()
                    scraped, refused = scraped + scraper.scrapes, refused + scraper.refused
                a.collector_s += a.collector_seconds() - collector_before
                throughput[a.name] = len(ms) / args.slice
                a.requests.append(len(ms))
                a.ms.extend(ms)
                a.throughput.append(throughput[a.name])
            for a in arms:
                a.ratios.append(throughput[a.name] / throughput["none"])
        print(f"{args.rounds} rounds of {args.slice:.0f} s per arm, {args.workers} connections, "
              f"closed loop; baseline {statistics.median(arms[0].throughput):.1f} requests/s")
        print(f"{'arm':24} {'req/s':>8} {'x none (median)':>16} {'quartiles':>16} "
              f"{'pooled':>7} {'95% of mean':>16} "
              f"{'P50 ms':>8} {'P99 ms':>8} {'max ms':>8} {'collector us/req':>17}")
        result = {}
        for a in arms:
            ratio = statistics.median(a.ratios)
            pooled = sum(a.requests) / sum(arms[0].requests)
            low, high = bootstrap_mean(a.ratios)
            per_request = a.collector_s / max(len(a.ms), 1) * 1e6
            print(f"{a.name:24} {statistics.median(a.throughput):8.1f} {ratio:16.4f} "
                  f"{quantile(a.ratios, 0.25):7.4f}..{quantile(a.ratios, 0.75):7.4f} "
                  f"{pooled:7.4f} {low:7.4f}..{high:7.4f} "
                  f"{quantile(a.ms, 0.5):8.3f} {quantile(a.ms, 0.99):8.3f} {max(a.ms):8.3f} "
                  f"{per_request:17.1f}")
            result[a.name] = {"throughput": statistics.median(a.throughput), "ratio": ratio,
                              "pooled": pooled, "mean_ci95": [low, high],
                              "ratios": a.ratios, "p50_ms": quantile(a.ms, 0.5),
                              "p99_ms": quantile(a.ms, 0.99), "max_ms": max(a.ms),
                              "collector_us_per_request": per_request}
        if "always-on+scraper" in names:
            print(f"hostile scraper: {scraped} scrapes answered "
                  f"({scraped / (args.rounds * args.slice):.0f}/s), {refused} refused or timed "
                  "out (10 s)")
        if "always-on+dump" in names:
            written = list(pathlib.Path(work, "always-on+dump-dumps").glob("gpuprobe_dump_*"))
            print(f"dumps written during the load: {len(written)} of {args.rounds}")
        print(json.dumps(result))
    finally:
        for a in arms:
            a.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
