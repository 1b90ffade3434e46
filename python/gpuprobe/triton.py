"""Triton's JIT compiles of kernels on gpuprobe's timeline, from Triton's own compilation listener
(`triton.knobs.compilation.listener`): each compile of a `@triton.jit` kernel — those of user code
that torch.compile never sees, and Inductor's when they compile in this process — as a range
"triton compile: <kernel>" (category compile) over the time Triton measured, or "triton cache
load: <kernel>" when its on-disk cache had the kernel; and each stage's time (the IR's creation,
ttir, ttgir, llir, ptx, cubin, storing the results) summed as counters "triton stage seconds:
<stage>". Triton calls the listener for every kernel its in-memory cache did not hold.

    watcher = gpuprobe.triton.watch_compile()
    ...                      # kernels launch, compile or load
    print(watcher.report())  # per compile: kernel, seconds, cache hit, stages; totals
    watcher.close()

A listener that was there before stays called; what the installed Triton lacks is said once
(``unavailable``), never guessed."""
import dataclasses
import threading
import time

from gpuprobe import _core

EVENTS = _core.event_names


@dataclasses.dataclass
class TritonCompileReport:
    """What Triton compiled while watched."""

    compiles: list  # {"kernel", "seconds", "cache_hit", "stages": {stage: seconds}, "at_ns"}
    stage_seconds: dict  # stage -> seconds over the real compiles
    cache_hits: int  # kernels loaded from Triton's on-disk cache
    cache_misses: int  # kernels compiled

    @property
    def compile_seconds(self):
        return sum(c["seconds"] for c in self.compiles if not c["cache_hit"])


def _kernel_name(src, metadata):
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not name:
        name = getattr(src, "name", None) or getattr(getattr(src, "fn", None), "__name__", None)
    return str(name or "?")


class TritonCompileWatcher:
    def __init__(self):
        self.unavailable = []
        self._lock = threading.Lock()
        self._compiles = []
        self._stages = {}
        self._knobs = None
        self._previous = None
        self._closed = False
        try:
            from triton import knobs
        except ImportError:
            self.unavailable.append("triton.knobs (Triton >= 3.4): no Triton compiles")
            return
        compilation = getattr(knobs, "compilation", None)
        if compilation is None or not hasattr(compilation, "listener"):
            self.unavailable.append("triton.knobs.compilation.listener: no Triton compiles")
            return
        self._knobs = compilation
        self._previous = compilation.listener
        compilation.listener = self._listen

    def _listen(self, *, src, metadata, metadata_group, times, cache_hit, **rest):
        try:
            if self._previous is not None:
                self._previous(src=src, metadata=metadata, metadata_group=metadata_group,
                               times=times, cache_hit=cache_hit, **rest)
        finally:
            try:
                self._record(src, metadata, times, cache_hit)
            except Exception:  # never into Triton's compile
                pass

    def _record(self, src, metadata, times, cache_hit):
        if self._closed:
            return
        end_ns = time.time_ns()
        # Triton's times are microseconds: the IR, each lowering stage in order, the store.
        stages = {"ir": getattr(times, "ir_initialization", 0) / 1e6}
        for stage, us in getattr(times, "lowering_stages", None) or ():
            stages[str(stage)] = stages.get(str(stage), 0.0) + us / 1e6
        stages["store"] = getattr(times, "store_results", 0) / 1e6
        total = getattr(times, "total", None)
        seconds = total / 1e6 if total is not None else sum(stages.values())
        name = _kernel_name(src, metadata)
        begin_ns = end_ns - int(seconds * 1e9)
        prefix = EVENTS["triton_cache_load"] if cache_hit else EVENTS["triton_compile"]
        _core._range_at((prefix + name)[:300], "compile", begin_ns, end_ns)
        with self._lock:
            self._compiles.append({"kernel": name, "seconds": seconds, "cache_hit": bool(cache_hit),
                                   "stages": stages, "at_ns": begin_ns})
            if not cache_hit:
                for stage, s in stages.items():
                    self._stages[stage] = self._stages.get(stage, 0.0) + s
            totals = dict(self._stages) if not cache_hit else None
        for stage, s in (totals or {}).items():
            _core.counter(EVENTS["triton_stage_seconds"] + stage, s, "compile")

    def report(self):
        with self._lock:
            return TritonCompileReport(
                compiles=[dict(c, stages=dict(c["stages"])) for c in self._compiles],
                stage_seconds=dict(self._stages),
                cache_hits=sum(c["cache_hit"] for c in self._compiles),
                cache_misses=sum(not c["cache_hit"] for c in self._compiles))

    def close(self):
        """Stops listening; the listener that was there before is put back."""
        self._closed = True
        if self._knobs is not None and self._knobs.listener == self._listen:
            self._knobs.listener = self._previous
        self._knobs = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def watch_compile():
    """Starts observing Triton's JIT compiles; returns a TritonCompileWatcher (``report()``,
    ``close()``)."""
    return TritonCompileWatcher()
