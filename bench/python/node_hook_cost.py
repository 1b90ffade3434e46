"""What torch itself charges for what gpuprobe.torch.instrument's backward ranges need per module
call, without gpuprobe: an autograd node's Python object (``tensor.grad_fn``), its ``metadata``
dict, and ``Node.register_prehook`` (the only public way to be told when a node runs). Arms
interleaved round by round; median ns per forward of one small matmul, and each arm's excess over
the bare matmul. The floor under instrument's cost with autograd on (bench/RESULTS.md, run 89).

    python bench/python/node_hook_cost.py [--rounds 9] [--calls 20000]
"""
import argparse
import functools
import statistics
import time

import torch


def hook(*_args):
    return None


def arm(x, w, kind, calls):
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        y = x @ w
        if kind >= 1:
            node = y.grad_fn
        if kind >= 2:
            node.metadata["k"] = 1
        if kind >= 3:
            node.register_prehook(hook)
        if kind >= 4:
            node.register_prehook(functools.partial(hook, 1))
    return (time.perf_counter_ns() - t0) / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    x = torch.randn(1, 4, requires_grad=True)
    w = torch.randn(4, 4, requires_grad=True)
    names = ["matmul (autograd on)", "+ grad_fn", "+ metadata", "+ register_prehook",
             "+ a second pre-hook (a partial)"]
    times = {k: [] for k in range(len(names))}
    for _ in range(args.rounds):
        for k in times:
            times[k].append(arm(x, w, k, args.calls))
    base = statistics.median(times[0])
    print(f"torch {torch.__version__}; median of {args.rounds} rounds, ns per forward")
    for k, name in enumerate(names):
        m = statistics.median(times[k])
        print(f"{name:32s} {m:8.0f}  +{m - base:6.0f}")


if __name__ == "__main__":
    main()
