"""One zoo run: a model's inference step and training step, eager or under torch.compile, with
or without gpuprobe, recording every tensor that must not change (outputs, loss, gradients,
parameters and buffers after the optimizer step) and, under torch.compile, Dynamo's counts
(graphs, ops, graph breaks and their reasons, recompiles and their reasons, frames)."""
import copy
import dataclasses
import time
import traceback
from typing import Optional

SEED_INFER = 1  # set before the inference step (dropout is off, but stochastic layers differ)
SEED_TRAIN = 2  # set before the training step: dropout and stochastic depth draw the same
LR = 0.01


@dataclasses.dataclass
class Run:
    """What one run recorded. ``tensors``: name -> tensor ("infer.output[0]", "train.loss",
    "grad.<parameter>", "after.<state_dict key>"); ``dynamo``: Dynamo's counts (compile mode
    only); ``error``: the exception the run raised, in words (None when it finished)."""

    tensors: dict
    dynamo: dict
    error: Optional[str]
    seconds: float
    trace: Optional[str] = None


def flatten(value, path="output"):
    """[(path, tensor)] of every tensor in a model's output: tensors, tuples and lists,
    namedtuples, dicts and transformers' ModelOutput (a dict)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [(path, value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in flatten(v, f"{path}.{k}")]
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in flatten(v, f"{path}[{i}]")]
    return []


def loss_of(output):
    """A scalar from every floating-point tensor of an output (sum of their mean squares): the
    same function of the output for every model, reaching every head (auxiliary ones too)."""
    terms = [t.float().square().mean() for _, t in flatten(output) if t.is_floating_point()]
    return sum(terms[1:], terms[0])


def reset_dynamo():
    """Forgets every compile, Dynamo's counters and its compilation metrics."""
    import torch._dynamo
    from torch._dynamo import utils

    torch._dynamo.reset()
    utils.counters.clear()
    clear = getattr(utils, "clear_compilation_metrics", None)
    if clear is not None:
        clear()


def dynamo_counts(counter):
    """Dynamo's counts since the last reset_dynamo(): graphs and ops (the counting backend's),
    unique graphs, frames, graph breaks (total and per reason) and recompiles (compiles that
    carry a recompile reason, and the reasons)."""
    from torch._dynamo import utils

    counters = utils.counters
    metrics = list(utils.get_compilation_metrics()) if hasattr(
        utils, "get_compilation_metrics") else []
    reasons = [str(m.recompile_reason) for m in metrics if getattr(m, "recompile_reason", None)]
    breaks = {k.splitlines()[0] if k else "": 0 for k in counters.get("graph_break", {})}
    for k, v in counters.get("graph_break", {}).items():
        breaks[k.splitlines()[0] if k else ""] += v
    return {
        "graphs": counter.frame_count,
        "ops": counter.op_count,
        "unique_graphs": counters.get("stats", {}).get("unique_graphs", 0),
        "frames": dict(counters.get("frames", {})),
        "graph_breaks": sum(counters.get("graph_break", {}).values()),
        "break_reasons": breaks,
        "recompiles": len(reasons),
        "recompile_reasons": sorted(reasons),
    }


class _Probe:
    """gpuprobe on one run: a recording Session to ``trace``, instrument(model), watch_compile(),
    watch_gc() and instrument_optimizer(opt), undone in reverse by close()."""

    def __init__(self):
        self._undo = []

    def open(self, trace, model, opt):
        import gpuprobe
        import gpuprobe.torch as gt

        import os

        cupti = ",cupti=kernel" if os.environ.get("GPUPROBE_ZOO_DEVICE", "cpu") != "cpu" else ""
        session = gpuprobe.Session(f"chrome={trace}{cupti}")
        session.__enter__()
        self._undo.append(lambda: session.__exit__(None, None, None))
        # backward="all": the most node hooks instrument() places (the default's are a subset).
        handle = gt.instrument(model, backward="all")
        self._undo.append(handle.remove)
        watcher = gt.watch_compile()
        self._undo.append(watcher.close)
        gpuprobe.watch_gc()
        self._undo.append(gpuprobe.unwatch_gc)
        hook = gt.instrument_optimizer(opt)
        self._undo.append(hook.remove)

    def close(self):
        while self._undo:
            self._undo.pop()()


def _steps(model, fn, opt, inputs, tensors):
    import torch

    args, kwargs = inputs
    model.eval()
    torch.manual_seed(SEED_INFER)
    with torch.no_grad():
        out = fn(*args, **kwargs)
    tensors.update((f"infer.{p}", t.detach().clone()) for p, t in flatten(out))
    model.train()
    torch.manual_seed(SEED_TRAIN)
    opt.zero_grad(set_to_none=True)
    out = fn(*args, **kwargs)
    loss = loss_of(out)
    loss.backward()
    tensors["train.loss"] = loss.detach().clone()
    tensors.update((f"train.{p}", t.detach().clone()) for p, t in flatten(out))
    tensors.update((f"grad.{n}", p.grad.clone()) for n, p in model.named_parameters()
                   if p.grad is not None)
    opt.step()
    tensors.update((f"after.{k}", v.detach().clone()) for k, v in model.state_dict().items())


def run(pristine, inputs, mode, *, probe_trace=None, backend="eager"):
    """Runs a copy of ``pristine`` (never itself changed) on ``inputs`` ((args, kwargs)): an
    inference step (eval, no_grad) and a training step (train, SGD), ``mode`` "eager" or
    "compile" (one torch.compile of the model with ``backend``, counted). With
    ``probe_trace``, gpuprobe records to that Chrome JSON path. Exceptions become Run.error."""
    import torch
    from torch._dynamo.testing import CompileCounterWithBackend

    model = copy.deepcopy(pristine)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    tensors, dynamo, error, probe = {}, {}, None, None
    counter = CompileCounterWithBackend(backend)
    reset_dynamo()
    started = time.perf_counter()
    try:
        if probe_trace is not None:
            probe = _Probe()
            probe.open(probe_trace, model, opt)
        fn = torch.compile(model, backend=counter) if mode == "compile" else model
        _steps(model, fn, opt, inputs, tensors)
    except Exception as e:  # the zoo reports it; the comparison decides whose it is
        error = _describe(e)
    finally:
        if probe is not None:
            try:
                probe.close()
            except Exception as e:
                error = error or "closing gpuprobe: " + _describe(e)
    seconds = time.perf_counter() - started
    if mode == "compile":
        dynamo = dynamo_counts(counter)
    reset_dynamo()
    return Run(tensors, dynamo, error, seconds, str(probe_trace) if probe_trace else None)


def _describe(e):
    where = traceback.extract_tb(e.__traceback__)[-1:] or [None]
    at = f" (at {where[0].filename.rsplit('/', 1)[-1]}:{where[0].lineno})" if where[0] else ""
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {first[:300]}{at}"
