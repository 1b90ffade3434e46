"""GPU tracing's cost on the workload users run: a small transformer served request by request,
part eager (cuBLAS GEMMs, many small elementwise kernels) and part torch.compile'd (Triton
kernels, launched through the driver API), under each recorder against no recorder.

CUPTI takes one subscriber per process, and torch.profiler (Kineto) keeps its subscription for
the rest of the process once it has profiled — and cannot get one in a process where gpuprobe
recorded GPU activity before (both seen on the H200). So each recorder runs in processes of its
own: a child serves rounds of requests alternating no recorder and its recorder (the order
swapped every pair), and reports the time the recorder added, the median of its pairs'
differences; the parent starts the children in turn, the recorders' order rotated each round,
and prints per recorder the median added time and its share of torch.profiler's. A
torch.profiler that recorded no CUDA event (no CUPTI) makes the run fail rather than look cheap.
    python3 bench/gpu/torch_serving_bench.py [--rounds N] [--pairs N] [--requests N]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

RECORDERS = ["gpuprobe ranges only", "gpuprobe cupti=all", "gpuprobe cupti=all+all_api",
             "torch.profiler (CPU+CUDA)"]
GPUPROBE_CONFIG = {"gpuprobe ranges only": "ring=65536", "gpuprobe cupti=all": "cupti=all",
                   "gpuprobe cupti=all+all_api": "cupti=all+all_api"}


def child(recorder, pairs, requests):
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile

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

    def serve(n):
        times = []
        with torch.no_grad():
            for _ in range(n):
                t0 = time.perf_counter()
                with gpuprobe.range("request"):
                    y = blocks(x)
                    (head(y) + y.mean()).sum().item()  # the response goes back to the host
                times.append(time.perf_counter() - t0)
        return statistics.median(times[len(times) // 5:]) * 1e3  # ms, warm part

    serve(20)  # compiles and warms up outside any measurement
    out = {"recorder": recorder, "added": [], "none": []}
    tmp = tempfile.mkdtemp()

    def recorded(n):
        if recorder == "torch.profiler (CPU+CUDA)":
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                ms = serve(n)
            # Counted after the timed part.
            out["cuda_events"] = sum(
                1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)
            return ms
        s = gpuprobe.Session(f"{GPUPROBE_CONFIG[recorder]},perfetto={tmp}/serve.pftrace")
        try:
            return serve(n)
        finally:
            s.stop()
            st = s.stats()
            out["stats"] = {k: st["gpu"][k] for k in
                            ("status", "records", "dropped", "filtered", "attributed",
                             "unattributed")}
            out["stats"]["events_dropped"] = st["dropped"]

    for i in range(pairs):
        if i % 2 == 0:
            base, rec = serve(requests), recorded(requests)
        else:
            rec, base = recorded(requests), serve(requests)
        out["none"].append(base)
        out["added"].append(rec - base)
    # Which libcupti files the process has mapped: more than one is two CUPTIs in one process.
    with open("/proc/self/maps") as maps:
        out["libcupti"] = sorted({ln.split()[-1] for ln in maps if "libcupti" in ln})
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--recorder", help=argparse.SUPPRESS)  # a child's recorder
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    if args.recorder:
        child(args.recorder, args.pairs, args.requests)
        return 0
    results = {r: [] for r in RECORDERS}
    last = {}
    for rnd in range(args.rounds):
        order = RECORDERS[rnd % len(RECORDERS):] + RECORDERS[:rnd % len(RECORDERS)]
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
    events = last["torch.profiler (CPU+CUDA)"].get("cuda_events", 0)
    if events == 0:
        mapped = ", ".join(last["torch.profiler (CPU+CUDA)"]["libcupti"]) or "none"
        print(f"INVALID: torch.profiler recorded no CUDA event (it did not get CUPTI); "
              f"libcupti mapped: {mapped}")
        return 1
    base = statistics.median(x for r in last.values() for x in r["none"])
    torch_added = statistics.median(results["torch.profiler (CPU+CUDA)"])
    print(f"torch {torch.__version__}; {args.rounds} rounds x {len(RECORDERS)} recorders, each a "
          f"process of {args.pairs} pairs x {args.requests} requests; a request: 2 eager blocks "
          f"and a compiled head, batch 8 x 64 x 256; no recorder {base:.3f} ms")
    print(f"{'recorder':30} {'added ms':>9} {'per process':>22} {'x torch.profiler':>17}")
    for r in RECORDERS:
        added = statistics.median(results[r])
        each = " ".join(f"{a:.3f}" for a in results[r])
        print(f"{r:30} {added:9.3f} {each:>22} {added / torch_added:17.2f}")
    for r, out in last.items():
        if "stats" in out:
            print(f"{r} (last round): {out['stats']}")
    print(f"torch.profiler (last round): {events} CUDA events")
    for r, out in last.items():
        print(f"{r}: libcupti mapped: {', '.join(out['libcupti']) or 'none'}")
    share = statistics.median(results["gpuprobe cupti=all"]) / torch_added
    print(f"serving: gpuprobe cupti=all adds {share:.2f}x what torch.profiler adds "
          f"(target <= 0.30)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
