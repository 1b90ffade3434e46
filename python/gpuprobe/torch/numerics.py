"""Compiled against eager: errors, the worst positions, NaN/Inf mismatches and the speedup; and,
per module, where the error starts."""
import copy
import dataclasses
import math
import time

from gpuprobe import _core
from gpuprobe.torch._common import EVENTS, _torch


@dataclasses.dataclass
class Comparison:
    passed: bool
    max_abs_error: float
    max_rel_error: float
    worst: list  # up to 5 of {"output", "index", "eager", "compiled", "abs_error"}
    nan_mismatches: int  # positions NaN in one result and not the other
    inf_mismatches: int
    eager_seconds: float  # median of the timed runs
    compiled_seconds: float
    speedup: float  # S = T_eager / T_compiled
    # per_module=True: each module's outputs, eager against compiled, in the order the modules
    # finished in the eager run: {"module", "call", "max_abs_error", "max_rel_error", "passed",
    # "observed"} ("observed" False: the compiled run never returned from that module, e.g.
    # code Dynamo replaced); and the first that failed, where the error starts.
    modules: list = dataclasses.field(default_factory=list)
    first_divergent: str = None


def _flatten(value, path="output"):
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return [(path, value)]
    if isinstance(value, (list, tuple)):
        return [x for i, v in enumerate(value) for x in _flatten(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _flatten(v, f"{path}[{k!r}]")]
    return []


def _time(fn, inputs, warmup, runs, sync):
    for _ in range(warmup):
        fn(*inputs)
    sync()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(*inputs)
        sync()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2]


def _compare_tensors(pairs, rtol, atol):
    """(passed, max_abs, max_rel, worst, nan_mismatches, inf_mismatches) over (path, eager,
    compiled) triples."""
    torch = _torch()
    max_abs = max_rel = 0.0
    worst = []
    nan_bad = inf_bad = 0
    passed = True
    for path, e, c in pairs:
        if e.shape != c.shape:
            raise ValueError(f"compare: {path} has shape {tuple(e.shape)} eagerly, "
                             f"{tuple(c.shape)} compiled")
        e64, c64 = e.detach().double().cpu(), c.detach().double().cpu()
        nan_bad += int((torch.isnan(e64) != torch.isnan(c64)).sum())
        inf_bad += int((torch.isinf(e64) != torch.isinf(c64)).sum())
        finite = torch.isfinite(e64) & torch.isfinite(c64)
        diff = torch.where(finite, (e64 - c64).abs(), torch.zeros_like(e64))
        rel = diff / e64.abs().clamp_min(torch.finfo(torch.float64).tiny)
        same_inf = torch.isinf(e64) & (e64 == c64)
        ok = finite & (diff <= atol + rtol * e64.abs()) | torch.isnan(e64) & torch.isnan(c64) | same_inf
        passed = passed and bool(ok.all())
        if diff.numel():
            max_abs = max(max_abs, float(diff.max()))
            max_rel = max(max_rel, float(torch.where(finite, rel, torch.zeros_like(rel)).max()))
            flat = diff.flatten()
            for i in torch.topk(flat, min(5, flat.numel())).indices.tolist():
                index = tuple(int(x) for x in torch.unravel_index(torch.tensor(i), e64.shape))
                worst.append({"output": path, "index": index, "eager": float(e64[index]),
                              "compiled": float(c64[index]), "abs_error": float(flat[i])})
    worst = sorted(worst, key=lambda w: -w["abs_error"])[:5]
    passed = passed and nan_bad == 0 and inf_bad == 0
    return passed, max_abs, max_rel, worst, nan_bad, inf_bad


def _module_outputs(module, run):
    """Runs ``run()`` with a forward hook on every module of ``module``'s tree: [(name, call,
    [(path, tensor)])] in the order the modules returned (the root is named by its class)."""
    records, calls = [], {}

    def hook(name):
        def record(_module, _inputs, output):
            calls[name] = calls.get(name, -1) + 1
            records.append((name, calls[name],
                            [(p, t.detach().clone()) for p, t in _flatten(output)]))
        return record

    handles = [m.register_forward_hook(hook(name or type(module).__name__))
               for name, m in module.named_modules()]
    try:
        run()
    finally:
        for h in handles:
            h.remove()
    return records


def _per_module(eager_fn, compiled_fn, inputs, rtol, atol):
    """Each module's outputs, eager against compiled. The compiled side is a copy of the model
    compiled as ``compiled_fn`` was (its Dynamo context, feature-detected), with the hooks in
    place before it compiles: Dynamo traces them, so they see the compiled graph's values. The
    user's compiled model and its cached code stay as they were. Making those values graph
    outputs can change what Inductor fuses."""
    torch = _torch()
    original = getattr(compiled_fn, "_orig_mod", None)
    if not isinstance(eager_fn, torch.nn.Module) or not isinstance(original, torch.nn.Module):
        raise ValueError("compare(per_module=True) takes a module and torch.compile(module)")
    context = getattr(compiled_fn, "dynamo_ctx", None)
    twin = copy.deepcopy(original)

    # A frame of its own for Dynamo to compile, the model inlined with its hooks: compiling the
    # copy itself would find the compiled code of its class's forward already cached (guards
    # that do not look at hooks) and run it without them.
    def through_hooks(*args):
        return twin(*args)

    twin_compiled = context(through_hooks) if callable(context) else torch.compile(through_hooks)
    with torch.no_grad():
        eager = _module_outputs(eager_fn, lambda: eager_fn(*inputs))
        compiled = {(name, call): out for name, call, out in
                    _module_outputs(twin, lambda: twin_compiled(*inputs))}
    rows = []
    for name, call, out in eager:
        other = compiled.get((name, call))
        row = {"module": name, "call": call, "observed": other is not None,
               "max_abs_error": None, "max_rel_error": None, "passed": None}
        if other is not None and [p for p, _ in out] == [p for p, _ in other]:
            passed, max_abs, max_rel, _, _, _ = _compare_tensors(
                [(p, e, c) for (p, e), (_, c) in zip(out, other)], rtol, atol)
            row.update(passed=passed, max_abs_error=max_abs, max_rel_error=max_rel)
        rows.append(row)
    first = next((r["module"] for r in rows if r["passed"] is False), None)
    return rows, first


def compare(eager_fn, compiled_fn, *inputs, rtol=1e-5, atol=1e-8, warmup=3, runs=10,
            per_module=False):
    """Runs both functions on ``inputs`` and compares every output tensor: max absolute and
    relative error, the worst positions, NaN/Inf disagreements, pass/fail (all within
    atol + rtol * |eager|, NaNs and Infs agreeing); then times both (median of ``runs`` after
    ``warmup``, synchronizing CUDA) for the speedup S = T_eager / T_compiled.

    ``per_module=True`` (a module and ``torch.compile`` of it): also each module's outputs
    compared the same way, in execution order, and the first module whose outputs diverge
    beyond the tolerance — where the error starts (``modules``, ``first_divergent``)."""
    torch = _torch()
    with torch.no_grad():
        eager_out = _flatten(eager_fn(*inputs))
        compiled_out = _flatten(compiled_fn(*inputs))
    if [p for p, _ in eager_out] != [p for p, _ in compiled_out]:
        raise ValueError("compare: the two functions return different structures")
    passed, max_abs, max_rel, worst, nan_bad, inf_bad = _compare_tensors(
        [(p, e, c) for (p, e), (_, c) in zip(eager_out, compiled_out)], rtol, atol)
    modules, first = _per_module(eager_fn, compiled_fn, inputs, rtol, atol) if per_module \
        else ([], None)
    cuda = torch.cuda.is_available() and any(t.is_cuda for _, t in eager_out)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    with torch.no_grad():
        t_eager = _time(eager_fn, inputs, warmup, runs, sync)
        t_compiled = _time(compiled_fn, inputs, warmup, runs, sync)
    speedup = t_eager / t_compiled if t_compiled > 0 else math.inf
    _core.counter(EVENTS["speedup"], speedup, "compile")  # S, for the report when recording
    return Comparison(passed=passed, max_abs_error=max_abs, max_rel_error=max_rel, worst=worst,
                      nan_mismatches=nan_bad, inf_mismatches=inf_bad, eager_seconds=t_eager,
                      compiled_seconds=t_compiled, speedup=speedup, modules=modules,
                      first_divergent=first)
