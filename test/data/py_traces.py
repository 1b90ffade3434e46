"""The gpuprobe-recorded traces kept in test/data for the golden reports (test/golden): small
CPU programs, each exercising sections of the report that the two H200 traces lack — the
torch.compile section with recompiles, a graph break, cache layers, phases and generated code
(py_compile), compare_modes()'s table (py_modes), data loading and GC pauses (py_data), JAX's
compiles (py_jax) and, from examples/compile/recompile_storm.py, recompile limit hits (py_storm).

Recorded with torch 2.x and jax on the CPU, then gzipped:
    python test/data/py_traces.py compile py_compile.json && gzip -9 py_compile.json
    python examples/compile/recompile_storm.py storm.pftrace && gpuprobe convert storm.pftrace py_storm.json
The goldens pin what `gpuprobe report` says of these files; re-recording them changes the numbers
in the goldens, so do it only with a reason."""
import gc
import pathlib
import sys
import time

import torch

import gpuprobe
import gpuprobe.torch as gt

which, out = sys.argv[1], sys.argv[2]
if which == "compile":  # test/python/compile_workload.py's program, which takes the path
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
    from compile_workload import PROGRAM
    sys.argv = [sys.argv[0], out]
    exec(compile(PROGRAM, "compile_workload.PROGRAM", "exec"))
elif which == "modes":
    def planted(x):
        return torch.relu(x @ x.T).sum(1)
    x = torch.randn(64, 64)
    with gpuprobe.Session(f"chrome={out}"):
        gt.compare_modes(planted, x, modes=("default", "no-such-mode"), rounds=2)
elif which == "data":
    class Slow(torch.utils.data.Dataset):
        def __len__(self): return 32
        def __getitem__(self, i):
            time.sleep(0.002 if i % 7 else 0.02); return torch.randn(8)
    loader = gt.instrument_dataloader(torch.utils.data.DataLoader(Slow(), batch_size=2))
    gpuprobe.watch_gc()  # GC pauses as ranges
    with gpuprobe.Session(f"chrome={out}"):
        for i, b in enumerate(loader):
            with gpuprobe.range("step"):
                if i % 5 == 0: gc.collect()
                b.sum()

elif which == "jax":
    import jax, jax.numpy as jnp, gpuprobe.jax as gj
    with gpuprobe.Session(f"chrome={out}"), gj.watch_compile():
        f = jax.jit(lambda x: jnp.sin(x) * 2)
        for n in (4, 8, 8):
            with gpuprobe.range("request"):
                f(jnp.ones(n)).block_until_ready()
