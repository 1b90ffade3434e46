"""Which torch.compile mode: `compare_modes(fn, *inputs)` compiles `fn` under each mode and
gives, per mode, T_compile, T_execute per call, the speedup S over eager, the calls after which
the compile has paid for itself, the numerics against eager and the graph breaks — one table,
which the report shows too when a session records (counters "compile mode: <mode>: <what>").

Everything runs in this process, in the order of `modes`: Inductor reuses kernels an earlier
mode already built (its code cache), so a later mode's T_compile can be smaller than it would
be alone; the table says which compiles found their graph in the FX graph cache."""
import dataclasses
import math
import time

from gpuprobe import _core
from gpuprobe.torch._common import EVENTS, _torch
from gpuprobe.torch.compile import watch_compile
from gpuprobe.torch.numerics import _compare_tensors, _flatten

MODES = ("default", "reduce-overhead", "max-autotune")


@dataclasses.dataclass
class ModeResult:
    mode: str
    compile_seconds: float  # T_compile: time inside compiles while the mode compiled
    execute_seconds: float  # T_execute: per call, the median of the rounds
    speedup: float  # S = T_eager / T_execute
    break_even_calls: float  # n* = T_compile / (T_eager - T_execute); inf when not faster
    passed: bool  # every output within atol + rtol * |eager|, NaNs and Infs agreeing
    max_abs_error: float
    max_rel_error: float
    graph_breaks: int
    compiles: int  # frame compiles (graph breaks and recompiles make more than one)
    fx_graph_cache_hits: int  # compiles whose graph an earlier compile had built
    first_call_seconds: float  # the first call on the program's clock: the compile and one run
    compiled: object = dataclasses.field(repr=False, default=None)  # torch.compile(fn, mode=...)
    error: str = None  # the mode could not compile or run: the exception, and no numbers

    @property
    def first_call_extra_seconds(self):
        """T_first: the first call less one run — T_compile and the first call's other one-off
        work outside Dynamo's compiles (the compiled graphs' first runs, Dynamo's bookkeeping
        around a compile; tens of milliseconds on some hosts, bench/RESULTS.md run 70)."""
        return self.first_call_seconds - self.execute_seconds


@dataclasses.dataclass
class ModeComparison:
    eager_seconds: float  # T_eager per call, the median of the rounds
    modes: list  # ModeResult, in the order compared

    @property
    def fastest(self):
        """The mode whose calls are fastest among those within the tolerance, or "eager" when
        none is faster than eager."""
        ok = [m for m in self.modes if m.error is None and m.passed and m.speedup > 1]
        return min(ok, key=lambda m: m.execute_seconds).mode if ok else "eager"

    def table(self):
        """The comparison as a plain-text table."""
        header = ("mode", "T_compile", "T_first", "T_execute", "S", "break-even",
                  "max abs error", "breaks", "compiles")

        def partial(*cells):  # a row's first cells, the others blank
            return cells + ("",) * (len(header) - len(cells))

        rows = [header, partial("eager", "", "", _ms(self.eager_seconds), "1.00")]
        for m in self.modes:
            if m.error is not None:
                rows.append(partial(m.mode, f"failed: {m.error}"[:60]))
                continue
            rows.append((m.mode, f"{m.compile_seconds:.2f} s",
                         f"{m.first_call_extra_seconds:.2f} s", _ms(m.execute_seconds),
                         f"{m.speedup:.2f}", _calls(m.break_even_calls),
                         f"{m.max_abs_error:.3g}" + ("" if m.passed else " (fails)"),
                         str(m.graph_breaks),
                         f"{m.compiles}" + (f" ({m.fx_graph_cache_hits} cached)"
                                            if m.fx_graph_cache_hits else "")))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                         for r in rows)


def _ms(seconds):
    return f"{seconds * 1e3:.3f} ms"


def _calls(n):
    return "never" if math.isinf(n) else f"{math.ceil(n)} calls"


def _record(result):
    """The mode's row as counters, for the report's compile section: a counter per column of
    the report's table (_core.mode_columns: the field and the counter's mark, one list for
    writer and reader); an infinite value (a break-even never reached) as -1."""
    prefix = f"{EVENTS['compile_mode']}{result.mode}: "
    for field, mark in _core.mode_columns:
        value = float(getattr(result, field))
        _core.counter(prefix + mark, value if not math.isinf(value) else -1.0, "compile")


def compare_modes(fn, *inputs, modes=MODES, rtol=1e-4, atol=1e-5, warmup=3, rounds=10,
                  sample_seconds=0.01):
    """Compiles ``fn`` with ``torch.compile(fn, mode=m)`` for each mode and compares the modes
    with eager on ``inputs``: T_compile (the compile watcher's time inside the mode's compiles,
    from its first call), T_first (the first call less one run), T_execute per call,
    S = T_eager / T_execute, the break-even call count n* = T_compile / (T_eager - T_execute),
    max errors and pass/fail against eager (``rtol``, ``atol``), graph breaks and compiles.
    Timing: after ``warmup`` calls of each, ``rounds`` rounds of one sample of eager and of every
    mode — as many calls as take about ``sample_seconds`` — the order rotating from round to
    round so that none always runs first;
    CUDA is synchronized around each sample; each arm's time is the median of its samples.
    A mode that fails to compile or run gets its error and no numbers. Returns a
    ModeComparison (``table()``, ``fastest``)."""
    torch = _torch()
    with torch.no_grad():
        eager_out = _flatten(fn(*inputs))
    cuda = torch.cuda.is_available() and any(t.is_cuda for _, t in eager_out)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    results = []
    for mode in modes:
        compiled = None
        watcher = watch_compile(cache_keys=False)
        try:
            compiled = torch.compile(fn, mode=mode)
            begin = time.perf_counter()
            with torch.no_grad():
                out = _flatten(compiled(*inputs))
            sync()
            first_call = time.perf_counter() - begin
            report = watcher.report()
        except Exception as e:  # a mode this torch or machine cannot use
            results.append(ModeResult(mode, math.nan, math.nan, math.nan, math.nan, False,
                                      math.nan, math.nan, 0, 0, 0, math.nan, compiled,
                                      f"{type(e).__name__}: {e}".splitlines()[0][:300]))
            continue
        finally:
            watcher.close()
        if [p for p, _ in out] != [p for p, _ in eager_out]:
            raise ValueError(f"compare_modes: mode {mode!r} returns another structure than eager")
        passed, max_abs, max_rel, _, _, _ = _compare_tensors(
            [(p, e, c) for (p, e), (_, c) in zip(eager_out, out)], rtol, atol)
        results.append(ModeResult(
            mode, report.compile_seconds, math.nan, math.nan, math.nan, passed, max_abs, max_rel,
            report.graph_break_count, len(report.compiles), report.cache.get("fxgraph_hit", 0),
            first_call, compiled))
    arms = [("eager", fn)] + [(r.mode, r.compiled) for r in results if r.error is None]
    samples = {name: [] for name, _ in arms}
    with torch.no_grad():
        # Each arm's calls per sample: enough for `sample_seconds`, from its warm-up calls.
        per_sample = {}
        for name, f in arms:
            sync()
            begin = time.perf_counter()
            for _ in range(warmup):
                f(*inputs)
            sync()
            each = (time.perf_counter() - begin) / max(warmup, 1)
            per_sample[name] = max(1, min(10_000, math.ceil(sample_seconds / max(each, 1e-9))))
        for round_ in range(rounds):
            for name, f in arms[round_ % len(arms):] + arms[:round_ % len(arms)]:
                n = per_sample[name]
                sync()
                begin = time.perf_counter()
                for _ in range(n):
                    f(*inputs)
                sync()
                samples[name].append((time.perf_counter() - begin) / n)
    median = {name: sorted(s)[len(s) // 2] for name, s in samples.items()}
    t_eager = median["eager"]
    for r in results:
        if r.error is not None:
            continue
        r.execute_seconds = median[r.mode]
        r.speedup = t_eager / r.execute_seconds if r.execute_seconds > 0 else math.inf
        gain = t_eager - r.execute_seconds
        r.break_even_calls = r.compile_seconds / gain if gain > 0 else math.inf
        _record(r)
    return ModeComparison(eager_seconds=t_eager, modes=results)
