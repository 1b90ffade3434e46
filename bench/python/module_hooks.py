"""What gpuprobe.torch.instrument costs per module call: a model of many small modules run
forward, in arms interleaved round by round in one process, each against the same model with no
hooks and with empty hooks (a Python pre- and post-hook doing nothing: what torch itself charges
for any hook). Reports the median per module call of each arm and its excess over empty hooks.

    python bench/python/module_hooks.py [--modules 200] [--calls 200] [--rounds 15] [--grad]

Arms: none (no hooks), empty (empty hooks), idle (instrument, no session recording), recording
(instrument, a session recording to a file), and with --grad the same forwards with autograd on
(instrument notes the nodes its backward ranges need; the backward itself is not run).
"""
import argparse
import statistics
import tempfile
import time

import torch

import gpuprobe
import gpuprobe.torch as gt


def model(n):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(n)])


def empty_hooks(m):
    def pre(module, args):
        return None

    def post(module, args, output):
        return None

    handles = []
    for sub in m.modules():
        handles.append(sub.register_forward_pre_hook(pre))
        handles.append(sub.register_forward_hook(post, always_call=True))
    return handles


def time_forward(m, x, calls, grad):
    with torch.set_grad_enabled(grad):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            m(x)
        return time.perf_counter_ns() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", type=int, default=200)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--grad", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    x = torch.randn(1, 4, requires_grad=args.grad)
    models = {"none": model(args.modules), "empty": model(args.modules),
              "idle": model(args.modules), "recording": model(args.modules)}
    empty_hooks(models["empty"])
    gt.instrument(models["idle"])
    gt.instrument(models["recording"])
    module_calls = args.modules + 1  # the Sequential's own call too
    times = {name: [] for name in models}
    trace = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    for name, m in models.items():  # warm
        time_forward(m, x, 5, args.grad)
    for _ in range(args.rounds):
        for name, m in models.items():
            if name == "recording":
                with gpuprobe.Session(f"chrome={trace}"):
                    ns = time_forward(m, x, args.calls, args.grad)
            else:
                ns = time_forward(m, x, args.calls, args.grad)
            times[name].append(ns / (args.calls * module_calls))
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"per module call, median of {args.rounds} rounds ({args.modules} Linear(4,4) modules, "
          f"{args.calls} forwards a round, grad {'on' if args.grad else 'off'}), torch "
          f"{torch.__version__}")
    print(f"{'arm':<10} {'ns/call':>9} {'vs none':>9} {'vs empty':>9}")
    for name, v in med.items():
        print(f"{name:<10} {v:9.0f} {v - med['none']:+9.0f} {v - med['empty']:+9.0f}")


if __name__ == "__main__":
    main()
