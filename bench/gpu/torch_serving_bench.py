"""GPU tracing's cost on the workload users run: a small transformer served request by request,
part eager (cuBLAS GEMMs, many small elementwise kernels) and part torch.compile'd (Triton
kernels, launched through the driver API), recorded by each recorder in turn against no recorder,
in one process with the modes interleaved and their order rotated every round.

Prints per mode the median request time, the time it adds over no recorder (the median of each
round's difference), that as a share of torch.profiler's added time, and for gpuprobe the records
its session counted. Run on the GPU machine (test/gpu/run.sh does):
    python3 bench/gpu/torch_serving_bench.py [--rounds N] [--requests N]
"""
import argparse
import statistics
import sys
import tempfile
import time

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = self.norm1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.mlp(x))


class Model(nn.Module):
    """Two eager blocks, then a head whose MLP runs compiled."""

    def __init__(self, d=256):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])
        self.head = nn.Sequential(nn.Linear(d, 2 * d), nn.SiLU(), nn.Linear(2 * d, d), nn.Tanh())

    def forward(self, x, compiled_head):
        for b in self.blocks:
            x = b(x)
        return compiled_head(x) + x.mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=60)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    import gpuprobe

    torch.manual_seed(0)
    model = Model().cuda().eval()
    head = torch.compile(model.head)
    x = torch.randn(8, 64, 256, device="cuda")

    def serve(n):
        times = []
        with torch.no_grad():
            for _ in range(n):
                t0 = time.perf_counter()
                with gpuprobe.range("request"):
                    y = model(x, head)
                    y.sum().item()  # the response goes back to the host
                times.append(time.perf_counter() - t0)
        return statistics.median(times[len(times) // 5:]) * 1e3  # ms, warm part of the round

    serve(20)  # compiles and warms up outside any measurement
    tmp = tempfile.mkdtemp()
    stats = {}

    def with_gpuprobe(config):
        def run(n):
            s = gpuprobe.Session(f"{config},perfetto={tmp}/serve.pftrace")
            try:
                return serve(n)
            finally:
                s.stop()
                stats[config] = s.stats()
        return run

    def with_torch_profiler(n):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            ms = serve(n)
        # Its GPU records, counted after the timed part: a torch.profiler that did not get CUPTI
        # would look cheap.
        stats["torch.profiler"] = sum(
            1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        return ms

    modes = {
        "none": serve,
        "gpuprobe ranges only": with_gpuprobe("ring=65536"),
        "gpuprobe cupti=all": with_gpuprobe("cupti=all"),
        "gpuprobe cupti=all+all_api": with_gpuprobe("cupti=all+all_api"),
        "torch.profiler (CPU+CUDA)": with_torch_profiler,
    }
    samples = {m: [] for m in modes}
    names = list(modes)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if r % 2:
            order.reverse()
        for m in order:
            samples[m].append(modes[m](args.requests))
    base = samples["none"]
    added = {m: statistics.median(a - b for a, b in zip(samples[m], base)) for m in names}
    torch_added = added["torch.profiler (CPU+CUDA)"]
    print(f"torch {torch.__version__}; {args.rounds} rounds x {args.requests} requests, "
          f"order rotated; request = 2 eager blocks + a compiled head, batch 8 x 64 x 256")
    print(f"{'mode':30} {'request ms':>11} {'added ms':>9} {'x torch.profiler added':>23}")
    for m in names:
        share = f"{added[m] / torch_added:.2f}" if m != "none" and torch_added > 0 else "-"
        print(f"{m:30} {statistics.median(samples[m]):11.3f} {added[m]:9.3f} {share:>23}")
    for config, st in stats.items():
        if config == "torch.profiler":
            print(f"torch.profiler (last round): {st} CUDA events")
            continue
        g = st["gpu"]
        print(f"{config} (last round): records {g['records']}, dropped {g['dropped']}, "
              f"filtered {g['filtered']}, attributed {g['attributed']}, "
              f"unattributed {g['unattributed']}, events dropped {st['dropped']}")
    all_share = added["gpuprobe cupti=all"] / torch_added if torch_added > 0 else float("nan")
    print(f"serving: gpuprobe cupti=all adds {all_share:.2f}x what torch.profiler adds "
          f"(target <= 0.30)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
