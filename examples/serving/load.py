"""The load generator for examples/serving/server.py: requests at a steady rate (open loop: each
is sent at its time whether or not the earlier ones were answered, so a stalled service shows as
latency, as users see it), through phases:

    steady   the shape the service was warmed with
    drift    the input's sequence length moves to a new value every --drift-step seconds: each
             new shape makes the compiled model recompile
    gc       each request asks the service to remember --remember records (a cache that is never
             trimmed): the live heap grows and Python's full collections get longer

    python examples/serving/load.py --url http://127.0.0.1:8080 \\
        --phases steady:10,drift:10,steady:10,gc:10,steady:5 --log requests.jsonl

Writes one JSON line per request (t: when it was sent, wall-clock seconds; phase; ms; status)
and one per phase start, and prints each phase's P50 and P99.
"""
import argparse
import http.client
import json
import threading
import time
import urllib.parse


def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Load:
    def __init__(self, url, rate, workers, batch, seq, drift_step, remember, log):
        self.target = urllib.parse.urlsplit(url)
        self.rate, self.workers = rate, workers
        self.batch, self.seq = batch, seq
        self.drift_step, self.remember = drift_step, remember
        self.log = log
        self.lock = threading.Lock()
        self.next_index = 0
        self.results = []

    def body(self, phase, phase_started, now):
        request = {"batch": self.batch, "seq": self.seq}
        if phase == "drift":
            request["seq"] = self.seq + 8 * (1 + int((now - phase_started) / self.drift_step))
        elif phase == "gc":
            request["remember"] = self.remember
        return json.dumps(request)

    def worker(self, schedule, start):
        connection = http.client.HTTPConnection(self.target.hostname, self.target.port, timeout=60)
        while True:
            with self.lock:
                index = self.next_index
                self.next_index += 1
            at = start + index / self.rate
            slot = next((s for s in schedule if s[1] <= at < s[2]), None)
            if slot is None:
                return
            phase, phase_started, _ = slot
            delay = at - time.time()
            if delay > 0:
                time.sleep(delay)
            body = self.body(phase, phase_started, at)
            sent = time.time()
            try:
                connection.request("POST", "/predict", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection(self.target.hostname, self.target.port,
                                                        timeout=60)
                status = 0
            ms = (time.time() - at) * 1000  # from its due time: waiting for a worker counts
            with self.lock:
                self.results.append({"t": at, "sent": sent, "phase": phase, "ms": ms,
                                     "status": status, "request": json.loads(body)})

    def run(self, phases):
        start = time.time() + 0.2
        schedule, t = [], start
        for name, seconds in phases:
            schedule.append((name, t, t + seconds))
            t += seconds
        threads = [threading.Thread(target=self.worker, args=(schedule, start), daemon=True)
                   for _ in range(self.workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.results.sort(key=lambda r: r["t"])
        if self.log:
            with open(self.log, "w") as f:
                for name, begin, end in schedule:
                    f.write(json.dumps({"phase_start": name, "t": begin, "end": end}) + "\n")
                for r in self.results:
                    f.write(json.dumps(r) + "\n")
        return schedule, self.results


def parse_phases(text):
    phases = []
    for part in text.split(","):
        name, _, seconds = part.partition(":")
        if name not in ("steady", "drift", "gc"):
            raise SystemExit(f"load.py: unknown phase '{name}' (steady, drift, gc)")
        phases.append((name, float(seconds)))
    return phases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--rate", type=float, default=40, help="requests per second")
    parser.add_argument("--workers", type=int, default=16, help="connections in parallel")
    parser.add_argument("--phases", default="steady:10,drift:10,steady:10,gc:10,steady:5")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--drift-step", type=float, default=2.5)
    parser.add_argument("--remember", type=int, default=4000)
    parser.add_argument("--log", help="JSON lines: one per phase start and one per request")
    args = parser.parse_args()
    load = Load(args.url, args.rate, args.workers, args.batch, args.seq, args.drift_step,
                args.remember, args.log)
    schedule, results = load.run(parse_phases(args.phases))
    for name, begin, end in schedule:
        ms = [r["ms"] for r in results if begin <= r["t"] < end]
        failed = sum(1 for r in results if begin <= r["t"] < end and r["status"] != 200)
        print(f"{name:7} {begin - schedule[0][1]:6.1f}..{end - schedule[0][1]:6.1f} s  "
              f"{len(ms):5} requests  P50 {percentile(ms, 0.5):8.1f} ms  "
              f"P99 {percentile(ms, 0.99):8.1f} ms  failed {failed}")


if __name__ == "__main__":
    main()
