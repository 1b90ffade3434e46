"""torch.profiler's cost per small CUDA op, for comparison with gpuprobe's launch benchmark.

Times N in-place adds on a one-element CUDA tensor (one kernel launch each), bare and inside
torch.profiler with CPU and CUDA activities, in the same run; prints microseconds per op and the
added cost. Run on the GPU machine (test/gpu/run.sh does)."""
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

N = 20000
REPEATS = 5


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
    bare = statistics.median(time_ops(x) for _ in range(REPEATS))
    profiled = []
    for _ in range(REPEATS):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            profiled.append(time_ops(x))
    prof = statistics.median(profiled)
    print(f"torch {torch.__version__}: bare {bare:.3f} us/op, torch.profiler(CPU+CUDA) {prof:.3f} us/op, "
          f"added {prof - bare:.3f} us/op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
