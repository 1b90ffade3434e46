"""A profiling schedule like torch.profiler's: record some steps of a long run, one trace per
active window, each handed to an ``on_trace_ready`` handler."""
import enum
import os
import shutil
import socket
import tempfile
import time

from gpuprobe import _core


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """The action for each step number, as ``torch.profiler.schedule``: after ``skip_first``
    steps, cycles of ``wait`` idle steps, ``warmup`` steps and ``active`` recorded steps, the last
    of which saves the trace; ``repeat`` cycles (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule: wait, warmup, repeat, skip_first must be >= 0 and active > 0")

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if at == cycle - 1 else ProfilerAction.RECORD

    return action


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` handler writing torch.profiler's TensorBoard layout:
    ``dir_name/<worker>.<time ms>.pt.trace.json[.gz]``, where HTA and the TensorBoard profiler
    plugin find traces."""
    worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        suffix = ".pt.trace.json" + (".gz" if use_gzip else "")
        stamp = time.time_ns() // 1000000
        while os.path.exists(os.path.join(dir_name, f"{worker}.{stamp}{suffix}")):
            stamp += 1  # two windows within a millisecond: the later one a millisecond on
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker}.{stamp}{suffix}"))

    return handler


class profile:
    """Records the active windows of ``schedule`` (every step when None) into Chrome traces and
    hands each to ``on_trace_ready`` (a callable taking this object, which can
    ``export_chrome_trace(path)``). ``config`` adds session options, e.g. ``"cupti=kernel"``.

    Warm-up steps record nothing: gpuprobe has no start-up cost to warm away (CUPTI is started by
    the first active step); they are kept so schedules read as torch.profiler's do.
    """

    def __init__(self, *, schedule=None, on_trace_ready=None, config=""):
        self._schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self._on_trace_ready = on_trace_ready
        self._config = config
        self._dir = tempfile.mkdtemp(prefix="gpuprobe-profile-")
        self._session = None
        self._trace = None
        self.step_num = 0
        self.traces_ready = 0

    def __enter__(self):
        self._apply(self._schedule(self.step_num))
        return self

    def __exit__(self, *exc):
        self._stop(save=True)
        shutil.rmtree(self._dir, ignore_errors=True)
        return False

    def step(self):
        """Ends the current step: marks it in the trace and moves the schedule on."""
        previous = self._schedule(self.step_num)
        if self._session is not None:
            _core.step(self.step_num)  # ProfilerStep#N with the schedule's step number
        self.step_num += 1
        if previous == ProfilerAction.RECORD_AND_SAVE:
            self._stop(save=True)
        self._apply(self._schedule(self.step_num))

    def export_chrome_trace(self, path):
        """Moves the trace of the window just finished to ``path`` (``.gz``: gzipped)."""
        if self._trace is None:
            raise RuntimeError("export_chrome_trace: no trace is ready")
        if path.endswith(".gz"):
            import gzip

            with open(self._trace, "rb") as src, gzip.open(path, "wb", compresslevel=1) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(self._trace)
        else:
            shutil.move(self._trace, path)
        self._trace = None

    def _apply(self, action):
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) and self._session is None:
            path = os.path.join(self._dir, f"window{self.traces_ready}.json")
            config = f"chrome={path}" + (f",{self._config}" if self._config else "")
            self._session = _core.Session(config)
            self._trace = path

    def _stop(self, save):
        if self._session is None:
            return
        session, self._session = self._session, None
        session.stop()
        # A window's Session made while another session records stands down and writes no
        # trace (its steps are in that session's): no trace to hand over.
        written = self._trace is not None and os.path.exists(self._trace)
        if save and self._on_trace_ready is not None and written:
            self.traces_ready += 1
            self._on_trace_ready(self)
        if self._trace is not None and os.path.exists(self._trace):
            os.remove(self._trace)
        self._trace = None
