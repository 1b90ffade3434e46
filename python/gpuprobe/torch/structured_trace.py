"""PyTorch's structured trace (the records TORCH_TRACE writes and tlparse reads), read in
process: torch logs each record to the `torch.__trace` logger with a `metadata` dict (which
artifact or event it is, the compile id's frame_id / frame_compile_id / attempt) and a `payload`.
gpuprobe's readers of it are logging handlers on that logger; while any is attached the logger
is at DEBUG (TORCH_TRACE sets that itself), which makes torch format its artifacts: about 7 % more
compile time, never the compiled code's runs."""
import logging

from gpuprobe import _core

_raised = {}  # logger -> its level before gpuprobe's first handler raised it
_attached = {}  # logger -> gpuprobe handlers on it


def trace_log(unavailable, what):
    """This torch's structured-trace logger, or None with the reason (for `what`) appended."""
    try:
        from torch._logging import _internal
    except ImportError:
        unavailable.append(f"the structured trace (torch._logging): {what}")
        return None
    log = getattr(_internal, "trace_log", None)
    if log is None:
        unavailable.append(f"the structured trace's logger: {what}")
    return log


def compile_id(metadata):
    """The compile id as PyTorch writes it: "frame/compile", "_attempt" when restarted."""
    frame, compile_ = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None or compile_ is None:
        return ""
    attempt = metadata.get("attempt") or 0
    return f"{frame}/{compile_}" + (f"_{attempt}" if attempt else "")


class Reader(logging.Handler):
    """A handler on the structured trace: `record(metadata, payload_text)` for each record, any
    exception kept out of torch's compile. It writes what it finds through ``out``: the
    recording session (gpuprobe._core) in process, or, where a TORCH_TRACE log recorded without
    gpuprobe is replayed (torch_trace.py, `log` None), an object with the same functions that
    keeps the events at the log's own times."""

    out = _core

    def __init__(self, log):
        super().__init__(logging.DEBUG)
        self._log = log
        if log is None:
            return
        log.addHandler(self)
        _attached[log] = _attached.get(log, 0) + 1
        if log not in _raised and not log.isEnabledFor(logging.DEBUG):
            _raised[log] = log.level
            log.setLevel(logging.DEBUG)

    def emit(self, record):
        try:
            metadata = getattr(record, "metadata", None)
            if isinstance(metadata, dict):
                self.record(metadata, getattr(record, "payload", None))
        except Exception:  # never into torch's compile
            pass

    def record(self, metadata, payload):
        raise NotImplementedError

    def close(self):
        if self._log is None:
            return super().close()
        self._log.removeHandler(self)
        _attached[self._log] -= 1
        if _attached[self._log] == 0 and self._log in _raised:
            self._log.setLevel(_raised.pop(self._log))
        super().close()
