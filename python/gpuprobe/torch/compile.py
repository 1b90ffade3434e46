"""The torch.compile observer: compile ranges, recompile reasons, graph breaks, eager fallbacks,
recompile-limit hits, cache counts and each run of a compiled graph, from what the installed
torch offers (private APIs feature-detected, never assumed)."""
import importlib
import logging
import sys
import threading
import time

from gpuprobe import _core
from gpuprobe.torch import structured_trace as _structured_trace
from gpuprobe.torch._common import EVENTS, FeatureUnavailable, _torch
from gpuprobe.torch.cache_keys import CacheKeys
from gpuprobe.torch.compile_phases import CompilePhases
from gpuprobe.torch.compile_report import CompileReport  # noqa: F401 (public here too)
from gpuprobe.torch.generated_code import GeneratedCode
from gpuprobe.torch.graph_break_sites import GraphBreakSites


class _LimitHandler(logging.Handler):
    def __init__(self, watcher):
        super().__init__(logging.WARNING)
        self._watcher = watcher

    def emit(self, record):
        message = record.getMessage()
        if "recompile_limit" in message or "cache_size_limit" in message:
            self._watcher._limit_hits.append(message)
            # Not "recompile <id>: ...": the report counts those as recompiles.
            _core.instant(EVENTS["recompile_limit_hit"] + message.splitlines()[0][:200], "compile")


def _generated_kernel_count():
    """Inductor's count of kernels it generated, where this torch keeps one; else None."""
    metrics = sys.modules.get("torch._inductor.metrics")
    return getattr(metrics, "generated_kernel_count", None) if metrics is not None else None


def graph_break_summary(reason):
    """What names a graph break's cause, on one line: the reason's title and, where torch writes
    one (2.7+), its explanation ("Failed to trace builtin operator: Dynamo does not know how to
    trace builtin operator `print` ..."). The title alone is often generic."""
    lines = [line.strip() for line in str(reason).splitlines() if line.strip()]
    if not lines:
        return "unknown"
    summary = lines[0]
    for line in lines[1:]:
        if line.startswith("Explanation:"):
            summary += ": " + line[len("Explanation:"):].strip()
            break
    return summary[:400]


def _frame_of(metric):
    """'fn (file:line)' of the frame a compilation metric describes, or ''."""
    name = getattr(metric, "co_name", None)
    if not name:
        return ""
    return f"{name} ({getattr(metric, 'co_filename', '?')}:{getattr(metric, 'co_firstlineno', '?')})"


def _metric_span_ns(metric):
    """(start, end) of a compile in time.time_ns() nanoseconds, from its metrics, or None."""
    start, end = getattr(metric, "start_time_us", None), getattr(metric, "end_time_us", None)
    if start is not None and end is not None and end >= start:
        return start * 1000, end * 1000
    return None


_watchers = []  # active CompileWatchers, which step() lets read finished compiles' metrics

class _Patch:
    """One method of a torch class (or a function of a module: class_name None), wrapped while
    any watcher is open: installed once, restored when the last watcher closes. ``make(original)`` returns the wrapper."""

    def __init__(self, module, class_name, method, make, unavailable):
        self._where = (module, class_name, method)
        self._make = make
        self._unavailable = unavailable
        self._cls = self._original = None

    def install(self):
        """None when installed (or already), else what is unavailable, in words."""
        if self._cls is not None:
            return None
        module, class_name, method = self._where
        try:
            cls = importlib.import_module(module)  # a module's function when class_name is None
            if class_name is not None:
                cls = getattr(cls, class_name)
            self._original = getattr(cls, method)
        except (ImportError, AttributeError):
            return self._unavailable
        setattr(cls, method, self._make(self._original))
        self._cls = cls
        return None

    @property
    def installed(self):
        return self._cls is not None

    def remove(self):
        if self._cls is not None and not _watchers:
            setattr(self._cls, self._where[2], self._original)
            self._cls = self._original = None


def _read_metrics_at_exit(original):
    # Every watcher reads a compile's metrics the moment Dynamo records them (the outermost
    # MetricsContext exit), so that the compile's range, its recompile reason and its graph
    # breaks are recorded at the compile, in order with the ranges around it: not at the next
    # compile or step.
    def exit_(context, *args):
        try:
            return original(context, *args)
        finally:
            if getattr(context, "_level", 1) == 0:
                for watcher in list(_watchers):
                    watcher._collect_metrics()

    return exit_


# Frame id -> (whether Dynamo's compile of that frame was of a resume function — the code after a
# graph break, "torch_dynamo_resume_in_<fn>_at_<line>" —, whether it met a graph break, the
# frame's function), from the compiles' metrics; a frame id that torch._dynamo.reset() hands out
# again is overwritten by its new compile.
_frames = {}
_compiles_recorded = [0]  # compiles whose metrics were read, on any thread
_last_forward = threading.local()  # per thread: (frame id, time.time_ns() at its end, compiles)
_RESUME_PREFIX = "torch_dynamo_resume_in"
_FORWARD = _core.range(EVENTS["compiled_graph_forward"], "torch")
_BACKWARD = _core.range(EVENTS["compiled_graph_backward"], "torch")


def _frame_id(compile_id):
    """The frame of a compile id ("3/1", "[3/1]", "3/1_1"), or None."""
    head = str(compile_id).strip("[]").split("/")[0]
    return int(head) if head.isdigit() else None


def _tag_graphs(original):
    # Each compiled graph learns the frame whose compile made it, when it is made ready to run —
    # after a compile and after a load from the FX graph cache alike — so that its runs tell the
    # graph after a graph break from the first graph of a call.
    def post_compile(graph, *args, **kwargs):
        result = original(graph, *args, **kwargs)
        try:
            from torch._guards import CompileContext

            graph._gpuprobe_frame = getattr(CompileContext.current_compile_id(), "frame_id", None)
            # What an earlier run worked out (a graph loaded from a cache may carry it) is stale,
            # and so is what _core.graph_runs remembered of it.
            if vars(graph).pop("_gpuprobe_run", None) is not None:
                _core._graph_runs_changed()
        except Exception:  # never into torch's compile
            pass
        return result

    return post_compile


def _graph_run(graph):
    """(its frame when it is a forward graph, whether that frame is a resume function, whether
    it met a graph break), worked out at a graph's first run and kept on it (plain values: a
    graph may be pickled): by then the metrics of the compile that made it have been read."""
    kwargs = getattr(graph, "fx_kwargs", None) or {}
    frame = None if kwargs.get("is_backward") else getattr(graph, "_gpuprobe_frame", None)
    resume, breaks, function = _frames.get(frame, (False, False, "")) if frame is not None else (
        False, False, "")
    # A call's first graph ends its dispatch (compiled_call_entry): recorded under this name.
    guards = (f"{EVENTS['dynamo_guards']}[{frame}] {function}".rstrip()
              if frame is not None and not resume else None)
    run = (frame, resume, breaks, bool(kwargs.get("is_backward")), guards)
    try:
        graph._gpuprobe_run = run
    except AttributeError:
        pass
    return run


def _record_graph_runs(original):
    # Every run of an Inductor-compiled graph as a range "compiled graph (forward)" or
    # "(backward)" (category torch): the report's T_execute, call count m and the compiled
    # share of a step (Amdahl). Before the forward graph of a resume function (the code after a
    # graph break), the time since the thread's previous forward graph of an earlier frame ended
    # is a range "eager after graph break": the eager fallback each break costs at run time
    # (T_fallback; the report sums them into T_overhead = N_break x T_fallback). A gap in which
    # a compile was recorded is the compile's, not the break's, and is left out. Only the graphs
    # of frames with a graph break pay for this (a clock read and a thread-local store). Runs
    # after a graph's first, when no break is near, take _core.graph_runs' path in C: the range
    # alone, no Python frame (a serving request's 1.9 µs on the H200 with a Python wrapper).
    def call(graph, inputs):
        known = getattr(graph, "_gpuprobe_run", None)
        if not (isinstance(known, tuple) and len(known) == 5):
            known = None  # not run yet (or what another gpuprobe version worked out)
        frame, resume, breaks, backward, guards = known or _graph_run(graph)
        if not backward:  # a first run follows its compile: not the call's dispatch
            _core._compiled_call_graph(guards if known else None)
        if not (resume or breaks):  # no graph break before or after this graph
            with _BACKWARD if backward else _FORWARD:
                return original(graph, inputs)
        if resume:
            last = getattr(_last_forward, "run", None)
            if last is not None and last[0] < frame and last[2] == _compiles_recorded[0]:
                _core._range_at(EVENTS["graph_break_eager"], "torch", last[1], time.time_ns())
        try:
            with _FORWARD:
                return original(graph, inputs)
        finally:
            _last_forward.run = (frame, time.time_ns(), _compiles_recorded[0])

    return _core.graph_runs(original, call, _FORWARD, _BACKWARD)


def graph_break_mark(reason, where):
    """The mark of one graph break: "graph break: <cause> [in <where>]"."""
    return EVENTS["graph_break"] + graph_break_summary(reason) + (f" [in {where}]" if where else "")


_MAX_ERROR = 2000  # a failed compile's error in its mark: torch's explanation and hint whole


def _at_word(text, limit):
    """`text` whole within `limit` characters; else cut at its last space before the limit, with
    an ellipsis: never in the middle of a word."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit)
    return (text[:space] if space > limit // 2 else text[:limit - 1]).rstrip(" ,;:.") + "…"


def mark_compile(m, out, with_range=True):
    """Writes through `out` what one compile's metrics say — Dynamo's CompilationMetrics, or the
    same fields of the structured trace's compilation_metrics record: the compile's range (when
    `with_range` and they carry its span), "recompile <id>: <guard>", a "compile restart" per
    analysis Dynamo began again and "eager fallback" when the compile failed — at the compile's
    start. Returns (the range's seconds, [{"compile_id", "reason"}] restarts, the fallback's
    {"compile_id", "frame", "error"} or None)."""
    compile_id = str(getattr(m, "compile_id", ""))
    frame = _frame_id(compile_id)
    if out is _core:  # this process's compiles, for its graph runs (not a replayed log's)
        if frame is not None:
            co_name = str(getattr(m, "co_name", "") or "")
            _frames[frame] = (co_name.startswith(_RESUME_PREFIX),
                              bool(getattr(m, "num_graph_breaks", 0) or
                                   getattr(m, "restart_reasons", None)), co_name)
        _compiles_recorded[0] += 1
    span = _metric_span_ns(m)
    seconds = 0.0
    if with_range and span is not None:
        out._range_at((EVENTS["compile"] + compile_id).strip(), "compile", span[0], span[1])
        seconds = (span[1] - span[0]) / 1e9
    at = span[0] if span is not None else time.time_ns()
    reason = getattr(m, "recompile_reason", None)
    if reason:
        out._instant_at(_at_word(f"{EVENTS['recompile']}{compile_id}: {reason}", 400), "compile",
                        at)
    restarts = []
    for restart in getattr(m, "restart_reasons", None) or ():
        summary = graph_break_summary(restart)
        restarts.append({"compile_id": compile_id, "reason": summary})
        out._instant_at(_at_word(f"{EVENTS['restart']}{compile_id}: {summary}", 400), "compile",
                        at)
    fallback = None
    fail_type = getattr(m, "fail_type", None)
    if fail_type:
        error = f"{fail_type}: {getattr(m, 'fail_reason', '') or ''}".strip()
        error = _at_word(" ".join(error.split()), _MAX_ERROR)
        fallback = {"compile_id": compile_id, "frame": _frame_of(m), "error": error}
        out._instant_at(f"{EVENTS['eager_fallback']}{compile_id}: {_frame_of(m) or '?'}: {error}",
                        "compile", at)
    return seconds, restarts, fallback


_metrics_exit = _Patch(
    "torch._dynamo.metrics_context", "MetricsContext", "__exit__", _read_metrics_at_exit,
    "Dynamo's MetricsContext (torch < 2.6): compile marks written at the next compile or step")
_graph_calls = _Patch(
    "torch._inductor.output_code", "CompiledFxGraph", "__call__", _record_graph_runs,
    "Inductor's CompiledFxGraph (torch < 2.6): no compiled-graph ranges, no Amdahl bound")
_call_entries = _Patch(
    "torch._dynamo.eval_frame", None, "_maybe_set_eval_frame", _core.compiled_call_entry,
    "Dynamo's _maybe_set_eval_frame: no guard time per compiled call")
_graph_tags = _Patch(
    "torch._inductor.output_code", "CompiledFxGraph", "post_compile", _tag_graphs,
    "Inductor's CompiledFxGraph.post_compile: no eager time after graph breaks")


class CompileWatcher:
    """Observes torch.compile (Dynamo) through what the installed torch offers and records, per
    frame compile, in category "compile":

    - a range "torch.compile <id>" over the compile's whole span as Dynamo's metrics give it
      (start to end of the compile, its deferred GC included), or over the compile start/end
      callbacks where this torch's metrics carry no span;
    - at the compile's start: "recompile <id>: <guard that failed>", "eager fallback <id>:
      <frame>: <exception>" when the compile failed and the frame ran eagerly, and one
      "graph break: <cause> [in <frame>]" per graph break Dynamo counted (every occurrence);
    - "recompile limit hit: ..." when Dynamo gives up recompiling a frame;
    - per compile and cache layer, "cache miss <id> FX graph: <the key components that changed
      since the frame's last compile>" or "cache hit <id> FX graph" (cache_keys.py);
    - the compile's phases as ranges "compile phase: <span>" and their time per group as
      counters (compile_phases.py); "generated code <id>: <path>: <kernels>" (generated_code.py);
    - totals as counters (cache hits and misses, graph ops, kernels generated);

    and each run of a compiled graph as a range, with the eager code between a graph break's two
    graphs as a range "eager after graph break" (see ``_record_graph_runs``).
    Compilation and results are unchanged."""

    def __init__(self, cache_keys=True, guards=True, guards_min_us=0.0):
        torch = _torch()
        try:
            import torch._dynamo.utils as dynamo_utils
        except ImportError as e:
            raise FeatureUnavailable(f"torch {torch.__version__} has no torch._dynamo") from e
        self._utils = dynamo_utils
        self._counters = getattr(dynamo_utils, "counters", None)
        self._baseline = self._snapshot()
        self._limit_hits = []
        self._tokens = threading.local()
        self._compile_seconds = 0.0
        # Compiles before watching (the record is process-wide and survives dynamo.reset()).
        self._seen_metrics = {self._metric_key(m) for m in self._all_metrics()}
        # Graph-break occurrences already marked, per reason (Dynamo's counts when watching began).
        self._marked_breaks = dict(self._baseline.get("graph_break", {}))
        self._kernels_baseline = _generated_kernel_count() or 0
        self._metrics = []
        self._fallbacks = []  # {"compile_id", "frame", "error"} per compile that fell back
        self._restarts = []  # {"compile_id", "reason"} per analysis Dynamo began again
        self.unavailable = []  # what this torch lacks, in words
        self._callbacks = None
        self._lock = threading.Lock()  # compiles on several threads read the metrics once each
        try:
            from torch._dynamo import callback as dynamo_callback

            self._callbacks = dynamo_callback.callback_handler
            self._callbacks.register_start_callback(self._on_start)
            self._callbacks.register_end_callback(self._on_end)
        except (ImportError, AttributeError):
            self.unavailable.append("compile start/end callbacks (torch < 2.3): no compile ranges")
        if not hasattr(dynamo_utils, "get_compilation_metrics"):
            self.unavailable.append("compilation metrics: no recompile reasons or durations")
        if self._counters is None:
            self.unavailable.append("dynamo counters: no graph-break reasons or cache counts")
        # The compile's span comes from its metrics where they are read at the compile's end.
        self._spans_from_metrics = (_metrics_exit.install() is None and
                                    hasattr(dynamo_utils, "get_compilation_metrics"))
        if not self._spans_from_metrics:
            self.unavailable.append("compile spans from metrics: compile ranges from callbacks")
        for patch in (_graph_calls, _graph_tags) + ((_call_entries,) if guards else ()):
            missing = patch.install()
            if missing:
                self.unavailable.append(missing)
        if guards and _call_entries.installed:
            # Process-wide: the last watcher that records them sets the threshold.
            _core._set_guards(True, max(0, int(guards_min_us * 1e3)))
        # About 7 % more compile time (the artifacts torch formats for it), never at run time.
        log = (_structured_trace.trace_log(
            self.unavailable, "no cache outcomes, compile phases or generated code")
            if cache_keys else None)
        self._trace_readers = ([CacheKeys(log), CompilePhases(log), GeneratedCode(log),
                                GraphBreakSites(log)] if log is not None else [])
        self._cache_events = self._trace_readers[0].events if self._trace_readers else []
        _watchers.append(self)
        self._log_handler = _LimitHandler(self)
        logging.getLogger("torch._dynamo").addHandler(self._log_handler)
        for what in self.unavailable:
            print(f"gpuprobe.torch: watch_compile: unavailable in torch {torch.__version__}: {what}",
                  file=sys.stderr)

    def _snapshot(self):
        if self._counters is None:
            return {}
        return {k: dict(v) for k, v in list(self._counters.items())}

    @staticmethod
    def _compile_id(args):
        # torch >= 2.8 passes CallbackArgs(callback_trigger, compile_id); older, nothing.
        return str(getattr(args[0], "compile_id", "")) if args else ""

    def _on_start(self, *args):
        # A compile on this thread: the compiled call under way is not in its dispatch (its
        # span, if any, would hold the compile and end at another frame's graph).
        _core._compiled_call_graph(None)
        self._collect_metrics()  # where metrics come late, the previous compile's
        stack = getattr(self._tokens, "stack", None)
        if stack is None:
            stack = self._tokens.stack = []
        token = None
        if not self._spans_from_metrics:
            token = _core._begin((EVENTS["compile"] + str(self._compile_id(args))).strip(), "compile")
        stack.append((token, time.perf_counter()))

    def _on_end(self, *args):
        stack = getattr(self._tokens, "stack", None)
        if not stack:
            return
        token, started = stack.pop()
        if token is not None:
            _core._end(token)
            self._compile_seconds += time.perf_counter() - started
            self._collect_metrics()
        # Else the compile's metrics, recorded just after this, are read then (with its breaks).

    def _all_metrics(self):
        get = getattr(self._utils, "get_compilation_metrics", None)
        return list(get()) if get is not None else []

    @staticmethod
    def _metric_key(m):
        return (str(getattr(m, "compile_id", "")), getattr(m, "start_time_us", None))

    def _collect_metrics(self):
        with self._lock:
            new = []
            for m in self._all_metrics():
                key = self._metric_key(m)
                if key not in self._seen_metrics:
                    self._seen_metrics.add(key)
                    new.append(m)
            for m in new:
                self._record_compile(m)
            # Breaks counted since the last look were traced by the newest compile.
            last = new[-1] if new else None
            self._mark_graph_breaks(_frame_of(last) if last is not None else "",
                                    (_metric_span_ns(last) or (None,))[0] if last is not None else None)
            if new:
                # Totals since watching, as counters the report reads back from the trace: cache
                # hit rate, and FX-graph ops per generated kernel (K).
                for name, value in self._totals().items():
                    _core.counter(name, value, "compile")

    def _record_compile(self, m):
        self._metrics.append(m)
        seconds, restarts, fallback = mark_compile(m, _core, self._spans_from_metrics)
        self._compile_seconds += seconds
        self._restarts += restarts
        if fallback is not None:
            self._fallbacks.append(fallback)

    def _mark_graph_breaks(self, frame, at_ns):
        # One mark per occurrence Dynamo counted (its counter per reason), at the compile that
        # traced it, with the cause and where: the line of user code from the structured trace
        # where it is read, else the compiled frame.
        if self._counters is None:
            return
        sites = self._trace_readers[3] if self._trace_readers else None
        at = at_ns if at_ns is not None else time.time_ns()
        for reason, count in list(self._counters.get("graph_break", {}).items()):
            new = count - self._marked_breaks.get(reason, 0)
            if new <= 0:
                continue
            self._marked_breaks[reason] = count
            for _ in range(min(new, 10000)):
                where = (sites.take(reason) if sites is not None else "") or frame
                _core._instant_at(graph_break_mark(reason, where), "compile", at)

    def _delta(self, group, now):
        before = self._baseline.get(group, {})
        return {k: v - before.get(k, 0) for k, v in now.get(group, {}).items()
                if v - before.get(k, 0) > 0}

    def _totals(self):
        now = self._snapshot()
        inductor, aot = self._delta("inductor", now), self._delta("aot_autograd", now)
        totals = {
            EVENTS["cache_hits"]: inductor.get("fxgraph_cache_hit", 0) + aot.get("autograd_cache_hit", 0),
            EVENTS["cache_misses"]: inductor.get("fxgraph_cache_miss", 0) + aot.get("autograd_cache_miss", 0),
            EVENTS["graph_ops"]: sum(getattr(m, "graph_op_count", 0) or 0 for m in self._metrics),
        }
        kernels = _generated_kernel_count()
        if kernels is not None:
            totals[EVENTS["kernels_generated"]] = kernels - self._kernels_baseline
        return totals

    def report(self):
        """The compile report so far (since watch_compile()). Compiles whose metrics arrived
        since the last compile or step are also marked in the trace now."""
        self._collect_metrics()
        now = self._snapshot()

        compiles, recompiles = [], []
        for m in self._metrics:
            compile_id = str(getattr(m, "compile_id", ""))
            duration_us = getattr(m, "duration_us", None)
            reason = getattr(m, "recompile_reason", None)
            compiles.append({
                "compile_id": compile_id,
                "seconds": duration_us / 1e6 if duration_us is not None else None,
                "recompile_reason": reason,
                "graph_breaks": getattr(m, "num_graph_breaks", None),
                "ops": getattr(m, "graph_op_count", None),
                "fail_type": getattr(m, "fail_type", None),
            })
            if reason:
                recompiles.append({"compile_id": compile_id, "reason": reason})
        inductor, aot = self._delta("inductor", now), self._delta("aot_autograd", now)
        frames = self._delta("frames", now)
        cache = {
            "fxgraph_hit": inductor.get("fxgraph_cache_hit", 0),
            "fxgraph_miss": inductor.get("fxgraph_cache_miss", 0),
            "aot_autograd_hit": aot.get("autograd_cache_hit", 0),
            "aot_autograd_miss": aot.get("autograd_cache_miss", 0),
        }
        return CompileReport(
            compiles=compiles,
            graph_breaks=self._delta("graph_break", now),
            recompiles=recompiles,
            cache=cache,
            eager_fallbacks=max(frames.get("total", 0) - frames.get("ok", 0), 0),
            fallbacks=list(self._fallbacks),
            recompile_limit_hits=list(self._limit_hits),
            compile_seconds=self._compile_seconds,
            cache_events=list(self._cache_events),
            phases={k: dict(v) for k, v in self._trace_readers[1].phases.items()}
            if self._trace_readers else {},
            generated_code=list(self._trace_readers[2].modules) if self._trace_readers else [],
            restarts=list(self._restarts),
        )

    def close(self):
        """Stops observing (the callbacks and the log handler are removed), first marking in the
        trace what the last compiles' metrics say (recompile reasons, cache counts)."""
        self._collect_metrics()
        if self._callbacks is not None:
            for remove, cb in ((self._callbacks.remove_start_callback, self._on_start),
                               (self._callbacks.remove_end_callback, self._on_end)):
                try:
                    remove(cb)
                except (AttributeError, ValueError):
                    pass
            self._callbacks = None
        logging.getLogger("torch._dynamo").removeHandler(self._log_handler)
        for reader in self._trace_readers:
            reader.close()
        self._trace_readers = []
        if self in _watchers:
            _watchers.remove(self)
        _graph_calls.remove()
        _graph_tags.remove()
        _call_entries.remove()
        if not _call_entries.installed:
            _core._set_guards(False, 0)
        _metrics_exit.remove()


def watch_compile(cache_keys=True, guards=True, guards_min_us=0.0):
    """Starts observing torch.compile; returns a CompileWatcher (``report()``, ``close()``).
    ``cache_keys=False``: without PyTorch's structured trace — no per-compile cache outcomes and
    changed key components, no compile phases, no generated code (reading it makes each compile
    about 7 % slower: torch formats its artifacts for it). ``guards=False``: no "dynamo guards"
    range per compiled call; ``guards_min_us``: only those at least this long."""
    return CompileWatcher(cache_keys, guards, guards_min_us)
