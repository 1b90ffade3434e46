"""One run of a small torch.compile workload recorded two ways at once — PyTorch's structured
trace (TORCH_TRACE) and a gpuprobe session with gpuprobe.torch.watch_compile() — for the tests
that hold gpuprobe's compile telemetry against the log: shape drift, a dtype change, a graph break
traced by every compile of the frame, and FX graph / AOTAutograd cache hits after
`torch._dynamo.reset()`; each call of the first function in a range "request"."""
import os
import subprocess
import sys

PROGRAM = r'''
import sys
import torch
import gpuprobe
import gpuprobe.torch as gt

def body(x):
    y = torch.sin(x) * 2
    print("graph break")  # each compile of this frame traces the break again
    return y + 1

watcher = gt.watch_compile()
with gpuprobe.Session(f"chrome={sys.argv[1]}"):
    f = torch.compile(body, dynamic=False)
    for n in (8, 16, 16, 8):
        with gpuprobe.range("request"):
            f(torch.ones(n, 4))
    f(torch.ones(8, 4, dtype=torch.float64))
    torch._dynamo.reset()  # the same graphs compiled again: the caches hit
    g = torch.compile(body, dynamic=False)
    g(torch.ones(8, 4))
watcher.close()
'''


def record_both(tmp):
    """Runs the workload in a fresh process under `tmp`: the trace is tmp/trace.json, the
    TORCH_TRACE directory tmp/torch_trace (Inductor's cache in tmp/inductor). Returns both."""
    trace, torch_trace = tmp / "trace.json", tmp / "torch_trace"
    env = dict(os.environ, TORCH_TRACE=str(torch_trace),
               TORCHINDUCTOR_CACHE_DIR=str(tmp / "inductor"))
    subprocess.run([sys.executable, "-c", PROGRAM, str(trace)], env=env, check=True,
                   capture_output=True, text=True)
    return trace, torch_trace
