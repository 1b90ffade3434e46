"""GPU tracing's cost on the workload users run: a small transformer served request by request,
part eager (cuBLAS GEMMs, many small elementwise kernels, a section of tiny kernels) and part
torch.compile'd (Triton kernels, launched through the driver API), under each recorder against no
recorder.

CUPTI takes one subscriber per process, and torch.profiler (Kineto) keeps its subscription for
the rest of the process once it has profiled — and cannot get one in a process where gpuprobe
recorded GPU activity before (both seen on the H200). So each recorder runs in processes of its
own: a child serves rounds of requests alternating no recorder and its recorder (the order
swapped every pair), and reports what the recorder added, the median of its pairs' differences:
wall time per request, and of it the time the host took to enqueue the request's work (before it
waits for the answer: CPU cost per launch shows there). The parent starts the children in turn,
the recorders' order rotated each round, and prints per recorder the median added time, its
share of torch.profiler's, added time per kernel, records per kernel and kernels attributed. A
torch.profiler that recorded no CUDA event (no CUPTI) makes the run fail rather than look cheap.
    python3 bench/gpu/torch_serving_bench.py [--rounds N] [--pairs N] [--requests N]
        [--recorders NAME,NAME...]   (default: the issue's four; --list shows every recorder)
    python3 bench/gpu/torch_serving_bench.py --bursts ON/EVERY [--burst-seconds S] [--rounds N]
        (gpu_burst= on the flight recorder, always on, against no recorder)
Environment: GPUPROBE_CLI (the gpuprobe command: counts each trace's kernels),
GPUPROBE_RAW_CUPTI (libraw_cupti_floor.so: the raw CUPTI floor recorders).
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TORCH_FULL = "torch.profiler (CPU+CUDA)"
GPUPROBE_ALL = "gpuprobe cupti=all"
# name -> (kind, setting): gpuprobe's config, torch.profiler's activities, the raw floor's kinds.
RECORDERS = {
    "gpuprobe ranges only": ("gpuprobe", "ring=65536,perfetto={trace}"),
    GPUPROBE_ALL: ("gpuprobe", "cupti=all,perfetto={trace}"),
    "gpuprobe kernel+memcpy+memset+runtime+driver": (
        "gpuprobe", "cupti=kernel+memcpy+memset+runtime+driver,perfetto={trace}"),
    "gpuprobe cupti=all (API activity records)": (
        "gpuprobe", "cupti=all,cupti_api=activity,perfetto={trace}"),
    "gpuprobe cupti=all+all_api": ("gpuprobe", "cupti=all+all_api,perfetto={trace}"),
    "gpuprobe cupti=kernel": ("gpuprobe", "cupti=kernel,perfetto={trace}"),
    "gpuprobe cupti=all (no sink)": ("gpuprobe", "cupti=all"),
    # Always on: the flight recorder keeps the last 30 s and writes nothing (no trigger fires).
    "gpuprobe flight=30 cupti=all": ("gpuprobe", "cupti=all,flight=30,dump={dumps}"),
    "gpuprobe flight=30 (ranges only)": ("gpuprobe", "ring=65536,flight=30,dump={dumps}"),
    "gpuprobe flight=30 cupti=all flight_mb=8": (
        "gpuprobe", "cupti=all,flight=30,flight_mb=8,dump={dumps}"),
    TORCH_FULL: ("torch", "cpu+cuda"),
    "torch.profiler (CUDA only)": ("torch", "cuda"),
    "raw CUPTI kernel (floor)": ("raw", 0),
    "raw CUPTI kernel+runtime+driver (floor)": ("raw", 3),
}
# The four (no recorder is each pair's other half), the floor CUPTI itself sets, and the
# way API calls were recorded before.
assert not any("," in name for name in RECORDERS), "--recorders is a comma-separated list"
DEFAULT = [GPUPROBE_ALL, "gpuprobe kernel+memcpy+memset+runtime+driver", TORCH_FULL,
           "raw CUPTI kernel (floor)", "gpuprobe cupti=all (API activity records)"]


def workload():
    """The served model and serve(n) -> (median wall ms, median enqueue ms) of n requests."""
    import torch
    from torch import nn

    import gpuprobe

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = self.norm1(x + self.attn(x, x, x, need_weights=False)[0])
            return self.norm2(x + self.mlp(x))

    d = 256
    torch.manual_seed(0)
    blocks = nn.Sequential(Block(d), Block(d)).cuda().eval()
    head = torch.compile(
        nn.Sequential(nn.Linear(d, 2 * d), nn.SiLU(), nn.Linear(2 * d, d), nn.Tanh()).cuda())
    x = torch.randn(8, 64, d, device="cuda")
    bias = torch.zeros(d, device="cuda")

    def serve(n, raw=False):
        walls, enqueues, starts = [], [], []
        with torch.no_grad():
            for _ in range(n):
                t0 = time.perf_counter()
                with gpuprobe.range("request"):
                    y = blocks(x)
                    for _ in range(8):  # tiny kernels: eager elementwise ops on a small vector
                        bias.mul_(0.5).add_(1e-3)
                    answer = head(y) + y.mean() + bias.sum()
                    t1 = time.perf_counter()
                    answer.sum().item()  # the response goes back to the host
                t2 = time.perf_counter()
                walls.append(t2 - t0)
                enqueues.append(t1 - t0)
                starts.append(t0)
        if raw:
            return walls, starts
        warm = n // 5
        return (statistics.median(walls[warm:]) * 1e3, statistics.median(enqueues[warm:]) * 1e3)

    serve(20)  # compiles and warms up outside any measurement
    return serve


def drops(requests):
    """Records lost per activity kind set, sessions one after another in one process."""
    import gpuprobe
    serve = workload()
    for kinds in ["all", "kernel+memcpy+memset+runtime+driver",
                  "kernel+memcpy+memset+runtime+driver+sync",
                  "kernel+memcpy+memset+runtime+driver+overhead"]:
        s = gpuprobe.Session(f"cupti={kinds}")
        serve(requests)
        s.stop()
        g = s.stats()["gpu"]
        print(f"drops: cupti={kinds}: records {g['records']}, dropped {g['dropped']}, "
              f"untimed {g['untimed']}, buffers refused {g['buffers_exhausted']}")


def collector_cpu_s():
    """CPU seconds of this process's gpuprobe collector thread (named gpuprobe), or 0."""
    total = 0.0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().strip() != "gpuprobe":
                    continue
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return total


def bursts(on_s, every_s, seconds, rounds):
    """gpu_burst=ON/EVERY on top of the flight recorder, always on as in production: sessions of
    `seconds` (several periods) alternated with as long without a recorder, the order swapped
    every round. Per request, whether it ran inside a burst (its start's time since the session
    started); printed: the added time inside bursts, between them, and on average (what a
    production process pays), against the mean without a recorder."""
    import gpuprobe
    serve = workload()
    per_second = max(1, int(1.0 / statistics.median(serve(50, raw=True)[0])))
    n = int(seconds * per_second)
    tmp = tempfile.mkdtemp()
    none, ranges, inside, between, collector = [], [], [], [], []
    for rnd in range(rounds):
        arms = ("none", "ranges", "bursts")
        for arm in (arms if rnd % 2 == 0 else arms[::-1]):
            if arm == "none":
                none.extend(serve(n, raw=True)[0])
                continue
            if arm == "ranges":  # the flight recorder without GPU activity: the floor between
                s = gpuprobe.Session(f"ring=65536,flight=30,dump={tmp}/dumps")
                ranges.extend(serve(n, raw=True)[0])
                s.stop()
                continue
            s = gpuprobe.Session(f"cupti=all,flight=30,dump={tmp}/dumps,"
                                 f"gpu_burst={on_s}s/{every_s}s")
            t0 = time.perf_counter()
            walls, starts = serve(n, raw=True)
            collector.append(collector_cpu_s() / n)
            s.stop()
            gpu = s.stats()["gpu"]
            for wall, start in zip(walls, starts):
                (inside if (start - t0) % every_s < on_s else between).append(wall)
    base = statistics.mean(none)
    out = {
        "setting": f"gpu_burst={on_s}s/{every_s}s", "requests": len(none),
        "none_ms": base * 1e3, "none_median_ms": statistics.median(none) * 1e3,
        "inside_added_ms": (statistics.mean(inside) - base) * 1e3,
        "between_added_ms": (statistics.mean(between) - base) * 1e3,
        "mean_added_ms": (statistics.mean(inside + between) - base) * 1e3,
        "share_inside": len(inside) / len(inside + between),
        "ranges_only_added_ms": (statistics.mean(ranges) - base) * 1e3,
        "inside_median_added_ms": (statistics.median(inside) - statistics.median(none)) * 1e3,
        "between_median_added_ms": (statistics.median(between) - statistics.median(none)) * 1e3,
        "p99_none_ms": statistics.quantiles(none, n=100)[98] * 1e3,
        "p99_between_ms": statistics.quantiles(between, n=100)[98] * 1e3,
        "collector_us_per_request": statistics.median(collector) * 1e6,
        "last_gpu": {k: gpu[k] for k in ("records", "dropped", "sampled", "bursts", "recorded_ns")},
    }
    print(f"bursts {out['setting']} on cupti=all,flight=30: {rounds} rounds of {seconds} s each "
          f"way, {n} requests a session; no recorder {base * 1e3:.3f} ms (mean)")
    print(f"  added inside bursts {out['inside_added_ms']:.3f} ms, between bursts "
          f"{out['between_added_ms']:.3f} ms, on average {out['mean_added_ms']:.3f} ms "
          f"({out['share_inside']:.0%} of requests inside); medians: inside "
          f"{out['inside_median_added_ms']:.3f} ms, between {out['between_median_added_ms']:.3f} "
          f"ms; flight=30 without GPU activity {out['ranges_only_added_ms']:.3f} ms; p99 without {out['p99_none_ms']:.3f} "
          f"ms, between bursts {out['p99_between_ms']:.3f} ms; collector "
          f"{out['collector_us_per_request']:.1f} us/request; last session {out['last_gpu']}")
    print(json.dumps(out))


def child(recorder, pairs, requests):
    import torch
    from torch.profiler import ProfilerActivity, profile

    import gpuprobe

    kind, setting = RECORDERS[recorder]
    serve = workload()
    out = {"recorder": recorder, "added": [], "added_enqueue": [], "none": [], "requests": requests}
    tmp = tempfile.mkdtemp()
    raw = ctypes.CDLL(os.environ["GPUPROBE_RAW_CUPTI"]) if kind == "raw" else None

    def recorded(n):
        if kind == "torch":
            activities = [ProfilerActivity.CUDA]
            if setting == "cpu+cuda":
                activities.append(ProfilerActivity.CPU)
            with profile(activities=activities) as p:
                timed = serve(n)
            # Counted after the timed part.
            out["kernels"] = sum(
                1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)
            return timed
        if kind == "raw":
            if raw.raw_cupti_start(setting) != 1:
                raise RuntimeError("raw CUPTI did not start")
            try:
                return serve(n)
            finally:
                out["kernels"] = raw.raw_cupti_stop()
        out["trace"] = f"{tmp}/serve.pftrace" if "{trace}" in setting else None
        s = gpuprobe.Session(setting.format(trace=out["trace"], dumps=f"{tmp}/dumps"))
        try:
            return serve(n)
        finally:
            out.setdefault("collector_s", []).append(collector_cpu_s())
            s.stop()
            st = s.stats()
            out["stats"] = {k: st["gpu"][k] for k in
                            ("status", "records", "dropped", "untimed", "filtered", "attributed",
                             "unattributed", "buffers_exhausted")}
            out["stats"]["events_dropped"] = st["dropped"]

    for i in range(pairs):
        if i % 2 == 0:
            base, rec = serve(requests), recorded(requests)
        else:
            rec, base = recorded(requests), serve(requests)
        out["none"].append(base[0])
        out["added"].append(rec[0] - base[0])
        out["added_enqueue"].append(rec[1] - base[1])
    # Which libcupti files the process has mapped: more than one is two CUPTIs in one process.
    with open("/proc/self/maps") as maps:
        out["libcupti"] = sorted({ln.split()[-1] for ln in maps if "libcupti" in ln})
    print(json.dumps(out))


def kernels_in(trace):
    """The kernel count `gpuprobe info` reads from a trace, or None without the command."""
    cli = os.environ.get("GPUPROBE_CLI")
    if not cli or not trace or not os.path.exists(trace):
        return None
    info = subprocess.run([cli, "info", trace], capture_output=True, text=True).stdout
    m = re.search(r"^\s*kernel\s+(\d+)$", info, re.M)
    return int(m.group(1)) if m else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--recorders", default=",".join(DEFAULT))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--drops", action="store_true", help="records lost per kind set, then exit")
    ap.add_argument("--bursts", metavar="ON/EVERY",
                    help="gpu_burst=ON/EVERY (seconds) against no recorder, then exit")
    ap.add_argument("--burst-seconds", type=float, default=4.0)
    ap.add_argument("--recorder", help=argparse.SUPPRESS)  # a child's recorder
    args = ap.parse_args()
    if args.list:
        print("\n".join(RECORDERS))
        return 0
    import torch
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    if args.recorder:
        child(args.recorder, args.pairs, args.requests)
        return 0
    if args.drops:
        drops(args.requests)
        return 0
    if args.bursts:
        on_s, every_s = (float(x) for x in args.bursts.split("/"))
        bursts(on_s, every_s, args.burst_seconds, args.rounds)
        return 0
    chosen = args.recorders.split(",")
    unknown = [r for r in chosen if r not in RECORDERS]
    if unknown or TORCH_FULL not in chosen:
        print(f"unknown recorders {unknown} (--list); {TORCH_FULL!r} is the reference")
        return 2
    if any(RECORDERS[r][0] == "raw" for r in chosen) and not os.environ.get("GPUPROBE_RAW_CUPTI"):
        print("the raw CUPTI floor needs GPUPROBE_RAW_CUPTI (build-gpu/bench/gpu/libraw_cupti_floor.so)")
        return 2
    results = {r: [] for r in chosen}
    enqueue = {r: [] for r in chosen}
    last = {}
    for rnd in range(args.rounds):
        order = chosen[rnd % len(chosen):] + chosen[:rnd % len(chosen)]
        if rnd % 2:
            order.reverse()
        for recorder in order:
            run = subprocess.run(
                [sys.executable, __file__, "--recorder", recorder, "--pairs", str(args.pairs),
                 "--requests", str(args.requests)], capture_output=True, text=True)
            lines = [ln for ln in run.stdout.splitlines() if ln.startswith("{")]
            if run.returncode != 0 or not lines:
                print(f"{recorder}: the child failed:\n{run.stderr[-2000:]}")
                return 1
            last[recorder] = json.loads(lines[-1])
            results[recorder].append(statistics.median(last[recorder]["added"]))
            enqueue[recorder].append(statistics.median(last[recorder]["added_enqueue"]))
            # As it goes, so that a run cut short still says what it measured.
            print(f"round {rnd + 1}: {recorder}: added {results[recorder][-1]:.3f} ms "
                  f"(pairs {' '.join(f'{a:.3f}' for a in last[recorder]['added'])})", flush=True)
    torch_kernels = last[TORCH_FULL].get("kernels", 0)
    if torch_kernels == 0:
        mapped = ", ".join(last[TORCH_FULL]["libcupti"]) or "none"
        print(f"INVALID: torch.profiler recorded no CUDA event (it did not get CUPTI); "
              f"libcupti mapped: {mapped}")
        return 1
    for out in last.values():
        if out.get("trace"):
            out["kernels"] = kernels_in(out["trace"])
    base = statistics.median(x for r in last.values() for x in r["none"])
    torch_added = statistics.median(results[TORCH_FULL])
    per_request = torch_kernels / args.requests
    print(f"torch {torch.__version__}; {args.rounds} rounds x {len(chosen)} recorders, each a "
          f"process of {args.pairs} pairs x {args.requests} requests; a request: 2 eager blocks, "
          f"16 tiny kernels and a compiled head, batch 8 x 64 x 256, {per_request:.1f} GPU "
          f"activities (torch.profiler's count); no recorder {base:.3f} ms")
    print(f"{'recorder':44} {'added ms':>8} {'each round':>20} {'x torch':>7} {'enqueue':>7} "
          f"{'us/kernel':>9} {'rec/kernel':>10} {'attributed':>12} {'lost':>4}")
    collector_us = {}
    for r in chosen:
        added = statistics.median(results[r])
        each = " ".join(f"{a:.3f}" for a in results[r])
        out = last[r]
        kernels = out.get("kernels")
        st = out.get("stats", {})
        rec_per = (f"{st['records'] / kernels:.2f}" if kernels and st.get("status") == "cupti"
                   else "")
        attributed = (f"{st['attributed']}/{st['attributed'] + st['unattributed']}"
                      if st.get("status") == "cupti" else "")
        lost = st.get("dropped", "") if st.get("status") == "cupti" else ""
        us_per = f"{added * 1e3 / per_request:.2f}"
        if out.get("collector_s"):
            # The collector's CPU per request, over the last session of the child.
            collector_us[r] = out["collector_s"][-1] / args.requests * 1e6
        print(f"{r:44} {added:8.3f} {each:>20} {added / torch_added:7.2f} "
              f"{statistics.median(enqueue[r]):7.3f} {us_per:>9} {rec_per:>10} {attributed:>12} "
              f"{lost!s:>4}")
    for r, us in collector_us.items():
        print(f"{r}: collector CPU {us:.1f} us per request (last session)")
    for r, out in last.items():
        if "stats" in out:
            print(f"{r} (last round): {out['stats']}, kernels {out.get('kernels')}")
        elif "kernels" in out:
            print(f"{r} (last round): {out['kernels']} kernels (or CUDA events)")
    mapped = {", ".join(out["libcupti"]) for out in last.values()}
    print(f"libcupti mapped: {' | '.join(sorted(mapped))}")
    if GPUPROBE_ALL in results:
        shares = [a / t for a, t in zip(results[GPUPROBE_ALL], results[TORCH_FULL])]
        share = statistics.median(results[GPUPROBE_ALL]) / torch_added
        print(f"serving: gpuprobe cupti=all adds {share:.2f}x what torch.profiler adds "
              f"(per round {' '.join(f'{x:.2f}' for x in shares)}; target <= 0.30)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
