"""One zoo case (a model in one mode): the run without gpuprobe, the run with it, and what
differs between them: an exception only gpuprobe's run raised, a tensor not bit-identical, a
Dynamo count not equal, a trace without the module ranges instrument() promises."""
import dataclasses
import json
import os
from typing import Optional

from zoo.runner import Run, reset_dynamo, run

SEED_BUILD = 0  # set before building a model and before making its inputs
# Dynamo's counts that must be equal with and without gpuprobe.
DYNAMO_KEYS = ("graphs", "ops", "unique_graphs", "frames", "graph_breaks", "break_reasons",
               "recompiles", "recompile_reasons")


@dataclasses.dataclass
class Case:
    """A case's outcome. ``status``: "pass", "fail" (``problems`` says why) or "baseline
    error" (the model fails without gpuprobe too: ``base.error``)."""

    name: str
    mode: str
    backend: str
    base: Run
    probe: Run
    problems: list
    module_ranges: Optional[int] = None  # distinct module ranges in the trace (eager)

    def row(self, mode_label):
        """This case as a JSON-ready dict (a line of the zoo's table)."""
        return {"model": self.name, "mode": mode_label, "status": self.status,
                "problems": self.problems, "base_error": self.base.error,
                "probe_error": self.probe.error, "base_dynamo": self.base.dynamo,
                "probe_dynamo": self.probe.dynamo, "base_seconds": round(self.base.seconds, 3),
                "probe_seconds": round(self.probe.seconds, 3),
                "module_ranges": self.module_ranges}

    @property
    def status(self):
        if self.base.error is not None:
            return "baseline error"
        return "fail" if self.problems else "pass"


def bit_identical(a, b):
    """True when two tensors have the same dtype, shape and values bit for bit (NaN where NaN)."""
    import torch

    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if torch.equal(a, b):
        return True
    return a.is_floating_point() and torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)


def tensor_problems(base, probe):
    """What differs between two runs' tensors, in words (at most 5, then a count)."""
    problems = []
    order = ("infer.", "train.", "grad.", "after.")
    keys = sorted(set(base) | set(probe),
                  key=lambda k: (next((i for i, p in enumerate(order) if k.startswith(p)), 4), k))
    for key in keys:
        if key not in probe or key not in base:
            problems.append(f"{key}: only {'without' if key in base else 'with'} gpuprobe")
        elif not bit_identical(base[key], probe[key]):
            a, b = base[key], probe[key]
            diff = ((a.double() - b.double()).abs().max().item()
                    if a.shape == b.shape and a.is_floating_point() else "shape/dtype")
            problems.append(f"{key}: not bit-identical (max abs diff {diff})")
    if len(problems) > 5:
        problems = problems[:5] + [f"... {len(problems) - 5} more tensors differ"]
    return problems


def dynamo_problems(base, probe):
    """Dynamo's counts that differ, in words."""
    problems = []
    for key in DYNAMO_KEYS:
        if base.get(key) != probe.get(key):
            problems.append(f"dynamo {key}: {base.get(key)!r} without gpuprobe, "
                            f"{probe.get(key)!r} with")
    return problems


def module_ranges(trace, root):
    """The distinct module range names (category torch, ``root`` or under it) in a Chrome JSON
    trace, and how many ranges named ``root`` (the model's own forwards) it holds."""
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    names = [e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "torch"]
    ours = {n for n in names if n == root or n.startswith(root + ".")}
    return ours, names.count(root)


def trace_problems(trace, model):
    """An eager run's trace must hold the model's two forwards (inference and training) as
    ranges and a range for at least half of its submodules, so that a no-op instrument()
    cannot pass."""
    root = type(model).__name__
    if not os.path.exists(trace):
        return ["no trace written"], 0
    ours, forwards = module_ranges(trace, root)
    problems = []
    if forwards < 2:
        problems.append(f"trace: {forwards} ranges named {root!r} (2 forwards ran)")
    submodules = sum(1 for _ in model.named_modules()) - 1
    found = max(len(ours) - 1, 0)
    if found < submodules // 2:
        problems.append(f"trace: {found} distinct submodule ranges for {submodules} "
                        "submodules (at least half expected)")
    return problems, len(ours)


def compile_trace_problems(trace):
    """A compiled run's trace must hold the compiles watch_compile() saw (category compile)."""
    if not os.path.exists(trace):
        return ["no trace written"]
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    if not any(e.get("cat") == "compile" and e.get("ph") == "X" for e in events):
        return ["trace: no compile ranges (watch_compile saw no compile)"]
    return []


def device():
    """The zoo's device: GPUPROBE_ZOO_DEVICE ("cpu", the default, or "cuda", where the runs use
    deterministic algorithms so that bit-identity means something, and gpuprobe records CUPTI
    kernels too)."""
    return os.environ.get("GPUPROBE_ZOO_DEVICE", "cpu")


def _to(value, where):
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(where)
    if isinstance(value, dict):
        return {k: _to(v, where) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_to(v, where) for v in value)
    return value


def build(spec):
    """``spec``'s model and inputs, seeded: the same weights and inputs every call (built on the
    CPU, then moved to device())."""
    import torch

    torch.manual_seed(SEED_BUILD)
    model = spec.build()
    torch.manual_seed(SEED_BUILD)
    inputs = spec.inputs()
    where = device()
    if where != "cpu":
        torch.use_deterministic_algorithms(True)
        model, inputs = model.to(where), _to(inputs, where)
    return model, inputs


def run_case(spec, mode, tmpdir, backend="eager", built=None):
    """Runs ``spec`` in ``mode`` ("eager" or "compile", torch.compile with ``backend``) without
    and then with gpuprobe (its trace under ``tmpdir``) from the same initial weights and
    inputs, and compares them."""
    model, inputs = built or build(spec)
    base = run(model, inputs, mode, backend=backend)
    trace = os.path.join(str(tmpdir), f"{spec.short}-{mode}-{backend}.json")
    probe = run(model, inputs, mode, probe_trace=trace, backend=backend)
    reset_dynamo()
    problems, ranges = [], None
    if base.error is None:
        if probe.error is not None:
            problems.append(f"gpuprobe only: {probe.error}")
        else:
            problems += tensor_problems(base.tensors, probe.tensors)
            problems += dynamo_problems(base.dynamo, probe.dynamo)
            if mode == "eager":
                found, ranges = trace_problems(trace, model)
                problems += found
            else:
                problems += compile_trace_problems(trace)
    return Case(spec.name, mode, backend, base, probe, problems, ranges)
