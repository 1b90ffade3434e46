"""What gpuprobe.torch.instrument costs per module call: a model of many small modules run
forward, in arms interleaved round by round in one process, each against the same model with no
hooks and with empty hooks (a Python pre- and post-hook doing nothing: what torch itself charges
for any hook). Reports the median per module call of each arm and its excess over empty hooks.

    python bench/python/module_hooks.py [--modules 200] [--calls 200] [--rounds 15] [--grad]
                                        [--model linears|blocks|resnet18]

Arms: none (no hooks), empty (empty hooks), idle (instrument, no session recording), recording
(instrument, a session recording to a file), rec_all (the same with backward="all": leaves'
backward ranges too), and with --grad the same forwards with autograd on (instrument notes the
nodes its backward ranges need: with the default, for the model and the modules with children;
the backward itself is not run). --model blocks: MODULES/4 blocks of (Linear, ReLU, Linear), a
block's call composite; resnet18: torchvision's, 32x32 input. Module calls are counted.
"""
import argparse
import statistics
import tempfile
import time

import torch

import gpuprobe
import gpuprobe.torch as gt


def model(kind, n):
    torch.manual_seed(0)
    if kind == "resnet18":
        import torchvision

        return torchvision.models.resnet18(num_classes=10)
    if kind == "blocks":  # n/4 blocks of (Linear, ReLU, Linear): a quarter of the calls composite
        return torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(),
                                                         torch.nn.Linear(4, 4))
                                     for _ in range(n // 4)])
    return torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(n)])


def count_module_calls(m, x):
    """Module forward calls in one forward of ``m``."""
    calls = []
    handles = [sub.register_forward_pre_hook(lambda *_: calls.append(1)) for sub in m.modules()]
    with torch.no_grad():
        m(x)
    for h in handles:
        h.remove()
    return len(calls)


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
    ap.add_argument("--model", choices=["linears", "blocks", "resnet18"], default="linears")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.model == "resnet18":
        x = torch.randn(1, 3, 32, 32, requires_grad=args.grad)
    else:
        x = torch.randn(1, 4, requires_grad=args.grad)
    models = {name: model(args.model, args.modules)
              for name in ("none", "empty", "idle", "recording", "rec_all")}
    for m in models.values():
        m.eval()  # batch norm with a batch of one
    empty_hooks(models["empty"])
    gt.instrument(models["idle"])
    gt.instrument(models["recording"])
    gt.instrument(models["rec_all"], backward="all")
    module_calls = count_module_calls(models["none"], x)
    times = {name: [] for name in models}
    trace = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    for name, m in models.items():  # warm
        time_forward(m, x, 5, args.grad)
    for _ in range(args.rounds):
        for name, m in models.items():
            if name.startswith("rec"):
                with gpuprobe.Session(f"chrome={trace}"):
                    ns = time_forward(m, x, args.calls, args.grad)
            else:
                ns = time_forward(m, x, args.calls, args.grad)
            times[name].append(ns / (args.calls * module_calls))
    med = {name: statistics.median(v) for name, v in times.items()}
    what = {"linears": f"{args.modules} Linear(4,4) modules",
            "blocks": f"{args.modules // 4} blocks of Linear(4,4), ReLU, Linear(4,4)",
            "resnet18": "torchvision resnet18"}[args.model] + f", {module_calls} module calls"
    print(f"per module call, median of {args.rounds} rounds ({what}, "
          f"{args.calls} forwards a round, grad {'on' if args.grad else 'off'}), torch "
          f"{torch.__version__}")
    print(f"{'arm':<10} {'ns/call':>9} {'vs none':>9} {'vs empty':>9}")
    for name, v in med.items():
        print(f"{name:<10} {v:9.0f} {v - med['none']:+9.0f} {v - med['empty']:+9.0f}")


if __name__ == "__main__":
    main()
