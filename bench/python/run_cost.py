"""What `gpuprobe run` costs an unmodified program, against the same program alone and under
torch.profiler, in one run: each round runs a training script (torchvision's resnet18 on random
data, SGD; never written for any profiler) once per arm, in the opposite order every other round,
each in a fresh interpreter, and the script times its own steps (after warm-up, inside the
program, so that interpreter start, imports and trace writing are not counted). Reported: the
median step time per arm across rounds, and the median within-round ratio to "none".

    none            python train.py
    gpuprobe run    python -m gpuprobe run -o T -- python train.py   (steps, modules to depth 2,
                    GC, DataLoader waits, NVTX: everything the runner turns on)
    torch.profiler  the same script run under torch.profiler.profile(activities=[CPU] (+ CUDA))
                    by a wrapper (runpy), the closest a user gets without editing it

    python bench/python/run_cost.py [--rounds 5] [--steps 20] [--device cpu|cuda]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

TRAIN = textwrap.dedent("""
    import sys, time
    import torch, torchvision
    from torch.utils.data import DataLoader, TensorDataset
    steps, device = int(sys.argv[1]), sys.argv[2]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torchvision.models.resnet18(num_classes=10).to(device)
    n = 4 * (steps + 3)
    loader = DataLoader(TensorDataset(torch.randn(n, 3, 64, 64), torch.randint(0, 10, (n,))),
                        batch_size=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    for i, (x, y) in enumerate(loader):
        t0 = time.perf_counter()
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        if i >= 3:  # warm-up
            times.append(time.perf_counter() - t0)
    print("STEP_MS", sorted(times)[len(times) // 2] * 1e3)
""")

PROFILED = textwrap.dedent("""
    import runpy, sys, torch
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if sys.argv[3] == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as p:
        sys.argv = [sys.argv[1]] + sys.argv[2:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    p.export_chrome_trace(sys.argv[0] + ".pt.trace.json")
""")


def step_ms(command, env):
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    for line in out.stdout.splitlines():
        if line.startswith("STEP_MS"):
            return float(line.split()[1])
    raise RuntimeError(f"{command[:4]}: no step time\n{out.stderr[-2000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    work = tempfile.mkdtemp()
    train = os.path.join(work, "train.py")
    with open(train, "w") as f:
        f.write(TRAIN)
    wrapper = os.path.join(work, "profiled.py")
    with open(wrapper, "w") as f:
        f.write(PROFILED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROBE")}
    py, steps = sys.executable, str(args.steps)
    arms = {
        "none": [py, train, steps, args.device],
        "gpuprobe run": [py, "-m", "gpuprobe", "run", "-o", os.path.join(work, "t-%p.json"),
                         "--", py, train, steps, args.device],
        "torch.profiler": [py, wrapper, train, steps, args.device],
    }
    times = {a: [] for a in arms}
    ratios = {a: [] for a in arms}
    for r in range(args.rounds):
        order = list(arms) if r % 2 == 0 else list(reversed(arms))
        got = {a: step_ms(arms[a], env) for a in order}
        for a in arms:
            times[a].append(got[a])
            ratios[a].append(got[a] / got["none"])
    print(f"resnet18 training step (batch 4, 64x64, {args.device}, 1 thread), {args.rounds} rounds "
          f"x {args.steps} steps, each arm a fresh process; median step ms, median within-round "
          "ratio to none")
    for a in arms:
        print(f"{a:16s} {statistics.median(times[a]):9.2f} ms   x{statistics.median(ratios[a]):.3f}")


if __name__ == "__main__":
    main()
