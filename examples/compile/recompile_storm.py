"""A recompile storm from shape drift, and the evidence gpuprobe gives for it.

A service compiles its model with `dynamic=False` and is then sent batches of sizes it has not
seen: every new size fails the shape guard and compiles the frame again, until Dynamo's recompile
limit sends the frame to eager for good. Run it, then read the report:

    python examples/compile/recompile_storm.py storm.pftrace
    gpuprobe report storm.pftrace --latency request
"""
import sys

import torch

import gpuprobe
import gpuprobe.torch as gt

model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8))
serve = torch.compile(model, dynamic=False)
torch._dynamo.config.automatic_dynamic_shapes = False  # every size its own graph, as in the storm

trace = sys.argv[1] if len(sys.argv) > 1 else "storm.pftrace"
watcher = gt.watch_compile()
with gpuprobe.Session(f"perfetto={trace}"), torch.no_grad():
    for step in range(40):
        batch = 8 if step < 20 else 8 + (step - 19)  # traffic drifts to new batch sizes at step 20
        with gpuprobe.range("request"):
            serve(torch.randn(batch, 64))
report = watcher.report()
watcher.close()
print(f"{len(report.compiles)} compiles, {len(report.recompiles)} recompiles, "
      f"{report.compile_seconds:.1f} s compiling; first reasons:")
for r in report.recompiles[:3]:
    print(f"  {r['compile_id']}: {r['reason']}")
