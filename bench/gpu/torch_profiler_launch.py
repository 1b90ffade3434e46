"""torch.profiler's cost per small CUDA op, for comparison with gpuprobe's launch benchmark.

Times N in-place adds on a one-element CUDA tensor (one kernel launch each), bare and inside
torch.profiler with CPU and CUDA activities, interleaved in the same run (the order reversed
every other round); prints the medians in microseconds per op and the added cost, the median of
each round's difference. Run on the GPU machine (test/gpu/run.sh does)."""
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

N = 20000
ROUNDS = 6


def time_ops(x):
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(N):
        x.add_(1)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / N * 1e6


def main():
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    x = torch.zeros(1, device="cuda")
    bare, profiled = [], []

    def profiled_run():
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            profiled.append(time_ops(x))

    for r in range(ROUNDS):
        cases = [lambda: bare.append(time_ops(x)), profiled_run]
        for case in cases if r % 2 == 0 else reversed(cases):
            case()
    added = statistics.median(p - b for p, b in zip(profiled, bare))
    print(f"torch {torch.__version__}: bare {statistics.median(bare):.3f} us/op, "
          f"torch.profiler(CPU+CUDA) {statistics.median(profiled):.3f} us/op, "
          f"added {added:.3f} us/op ({ROUNDS} interleaved rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
