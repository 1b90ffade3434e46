"""gpuprobe for Python: the C++ library's recording, with the same API and the same rings.

    import gpuprobe

    with gpuprobe.Session("chrome=trace.json"):
        with gpuprobe.range("load"):
            ...
        gpuprobe.step()

Python ranges land in the same per-thread rings as the C++ ones (category "python" unless
given), so C++ ranges opened inside a Python range nest under it in the trace. The GPUPROBE
environment variable starts a session when the module is imported, as it does for C++ programs.
"""
import atexit as _atexit
import functools as _functools
import gc as _gc
import os as _os
import sys as _sys

# `python -m gpuprobe run ...` runs a program under gpuprobe and records nothing itself: a
# GPUPROBE of the caller's would start a session in the runner (and write the caller's file),
# so it is dropped before the extension, whose load starts that session, is imported. The
# program's GPUPROBE is the runner's to set.
if getattr(_sys, "orig_argv", [])[1:3] == ["-m", "gpuprobe"]:
    _os.environ.pop("GPUPROBE", None)

from gpuprobe import _core  # noqa: E402 - after the runner's GPUPROBE is dropped
from gpuprobe._core import (
    Session,
    category_enabled,
    counter,
    dump,
    instant,
    range,
    set_category_enabled,
    set_thread_name,
    step,
)
from gpuprobe._schedule import ProfilerAction, profile, schedule, tensorboard_trace_handler
from gpuprobe._report import report

__version__ = _core.version

__all__ = [
    "Session", "range", "instant", "counter", "step", "set_thread_name", "set_category_enabled",
    "category_enabled", "watch_gc", "unwatch_gc", "schedule", "profile", "ProfilerAction",
    "tensorboard_trace_handler", "help", "dump", "report",
]


def _decorate(rng, fn):
    # A coroutine function's range covers its run, awaits included (on its task's track), not
    # the creation of the coroutine object.
    import inspect  # here: it costs milliseconds at import, and most programs never decorate

    if inspect.iscoroutinefunction(fn):
        @_functools.wraps(fn)
        async def async_wrapper(*args, **kwargs):
            with rng:
                return await fn(*args, **kwargs)

        return async_wrapper

    @_functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with rng:
            return fn(*args, **kwargs)

    return wrapper


_core._set_decorate(_decorate)

# At interpreter exit the session still recording (GPUPROBE's, or a Session never closed) is
# stopped and written while Python is whole: after it, Ctrl-C's KeyboardInterrupt ends the
# process by SIGINT, and static destructors, which would write it, never run.
_atexit.register(_core._stop_recording_session)


def watch_gc():
    """Records Python's garbage-collector pauses: a range "gc gen<N>" (category gc) per
    collection, and counters "gc collected" / "gc uncollectable". Idempotent."""
    if _core.gc_callback not in _gc.callbacks:
        _gc.callbacks.append(_core.gc_callback)


def unwatch_gc():
    """Stops recording GC pauses."""
    while _core.gc_callback in _gc.callbacks:
        _gc.callbacks.remove(_core.gc_callback)


def help():
    """The config keys a Session takes."""
    return Session.help()
