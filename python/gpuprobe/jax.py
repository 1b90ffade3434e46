"""JAX's compiles on gpuprobe's timeline, from what JAX itself reports through ``jax.monitoring``:
each phase of each compile as a range (category "compile") — tracing to a jaxpr, lowering to an
MLIR module, the backend compile — named by phase and function, and the persistent compilation
cache's answer for each. On a cache hit JAX still reports a short backend compile (the load), so
only the cache events tell a compile from a load: the range of a load is named so.

    watcher = gpuprobe.jax.watch_compile()
    ...                      # jitted code runs, compiles, hits or misses the cache
    print(watcher.report())  # per compile: function, phases, cache; totals
    watcher.close()

Listeners are registered once per watcher and removed by ``close()``; what the installed JAX
lacks is said once and left out, never guessed.
"""
import dataclasses
import os
import sys
import threading
import time

from gpuprobe import _core

# JAX's event names (jax/_src/dispatch.py, compiler.py, compilation_cache.py) and the phase each
# names on gpuprobe's timeline.
PHASES = {
    "/jax/core/compile/jaxpr_trace_duration": _core.event_names["jax_trace"],
    "/jax/core/compile/jaxpr_to_mlir_module_duration": _core.event_names["jax_lower"],
    "/jax/core/compile/backend_compile_duration": _core.event_names["jax_backend_compile"],
}
CACHE_HIT = "/jax/compilation_cache/cache_hits"
CACHE_MISS = "/jax/compilation_cache/cache_misses"
RETRIEVAL = "/jax/compilation_cache/cache_retrieval_time_sec"
TIME_SAVED = "/jax/compilation_cache/compile_time_saved_sec"
# The range names (lib/formats/framework_events.h, which the report and metrics read), a prefix and
# the phase: "jax trace: f", "jax backend compile: jit(f)", and for a backend compile the cache
# answered, "jax cache load: jit(f)".
RANGE_PREFIX = _core.event_names["jax"]
LOAD = _core.event_names["jax_cache_load"]
BACKEND_COMPILE = _core.event_names["jax_backend_compile"]


@dataclasses.dataclass
class JaxCompileReport:
    """What JAX compiled while watched."""

    compiles: list  # per backend compile: fun_name, seconds, cache ("hit", "miss" or None), at_ns
    phase_seconds: dict  # phase -> seconds, loads apart ("cache load")
    cache_hits: int
    cache_misses: int
    retrieval_seconds: float  # reading executables from the persistent cache
    time_saved_seconds: float  # what JAX says the hits saved
    xla_dump_dir: str  # XLA_FLAGS=--xla_dump_to, or ""

    @property
    def compile_seconds(self):
        """Time in real compiles (every phase but the loads)."""
        return sum(s for phase, s in self.phase_seconds.items() if phase != LOAD)


def _xla_dump_dir():
    for flag in os.environ.get("XLA_FLAGS", "").split():
        if flag.startswith("--xla_dump_to="):
            return flag.split("=", 1)[1]
    return ""


class JaxCompileWatcher:
    """Records JAX's compile phases and cache answers until ``close()``."""

    def __init__(self):
        try:
            import jax.monitoring as monitoring
        except ImportError as e:
            raise RuntimeError("gpuprobe.jax needs JAX (pip install jax)") from e
        self._monitoring = monitoring
        self._lock = threading.Lock()
        self._compiles = []
        self._phase_seconds = {}
        self._hits = self._misses = 0
        self._retrieval = self._saved = 0.0
        self._pending_cache = None  # the cache's answer, waiting for its backend compile
        self._closed = False
        self._spans = hasattr(monitoring, "register_event_time_span_listener")
        if self._spans:
            monitoring.register_event_time_span_listener(self._on_span)
        else:
            print("gpuprobe.jax: this JAX reports durations only; each compile phase is placed "
                  "to end when JAX reported it", file=sys.stderr)
        monitoring.register_event_duration_secs_listener(self._on_duration)
        monitoring.register_event_listener(self._on_event)

    def close(self):
        """Removes the listeners; the report keeps what was seen."""
        if self._closed:
            return
        self._closed = True
        m = self._monitoring
        for unregister, listener in (("unregister_event_time_span_listener", self._on_span),
                                     ("unregister_event_duration_listener", self._on_duration),
                                     ("unregister_event_listener", self._on_event)):
            if hasattr(m, unregister) and (listener != self._on_span or self._spans):
                try:
                    getattr(m, unregister)(listener)
                except (AssertionError, ValueError, KeyError):
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _on_event(self, name, **kwargs):
        if self._closed or name not in (CACHE_HIT, CACHE_MISS):
            return
        hit = name == CACHE_HIT
        with self._lock:
            if hit:
                self._hits += 1
            else:
                self._misses += 1
            self._pending_cache = "hit" if hit else "miss"
        _core._instant_at(_core.event_names["jax_cache_hit" if hit else "jax_cache_miss"],
                          "compile", time.time_ns())

    def _on_duration(self, name, seconds, **kwargs):
        if self._closed:
            return
        if name == RETRIEVAL or name == TIME_SAVED:
            with self._lock:
                if name == RETRIEVAL:
                    self._retrieval += seconds
                else:
                    self._saved += seconds
            return
        if name in PHASES and not self._spans:
            end = time.time()
            self._on_phase(name, end - seconds, end, kwargs.get("fun_name", ""))

    def _on_span(self, name, start, end, **kwargs):
        if not self._closed and name in PHASES:
            self._on_phase(name, start, end, kwargs.get("fun_name", ""))

    def _on_phase(self, name, start, end, fun_name):
        phase = PHASES[name]
        begin_ns, end_ns = int(start * 1e9), int(end * 1e9)
        seconds = max(0.0, end - start)
        with self._lock:
            cache = None
            if phase == BACKEND_COMPILE:
                cache, self._pending_cache = self._pending_cache, None
                if cache == "hit":
                    phase = LOAD
                self._compiles.append({"fun_name": fun_name, "seconds": seconds, "cache": cache,
                                       "at_ns": begin_ns})
            self._phase_seconds[phase] = self._phase_seconds.get(phase, 0.0) + seconds
        _core._range_at(f"{RANGE_PREFIX}{phase}: {fun_name}"[:300], "compile", begin_ns, end_ns)

    def report(self):
        """A JaxCompileReport of everything seen so far."""
        with self._lock:
            return JaxCompileReport(
                compiles=[dict(c) for c in self._compiles],
                phase_seconds=dict(self._phase_seconds), cache_hits=self._hits,
                cache_misses=self._misses, retrieval_seconds=self._retrieval,
                time_saved_seconds=self._saved, xla_dump_dir=_xla_dump_dir())


def watch_compile():
    """Starts observing JAX's compiles; returns a JaxCompileWatcher (``report()``, ``close()``)."""
    return JaxCompileWatcher()
