"""Where each graph break happened, from the structured trace's `dynamo_graph_break_reason`
record: the innermost frame of its "User code traceback" — the line of user code Dynamo could
not trace, e.g. `body (model.py:7)` — where Dynamo's counters give only the reason and the
compilation metrics only the compiled frame's first line. The watcher takes one site per
occurrence it marks, matched by the reason's first line."""
import re
import threading

from gpuprobe.torch.structured_trace import Reader

_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)', re.M)
_AT = re.compile(r"^Graph break in user code at (.+):(\d+)$", re.M)
_KEPT = 1000  # sites not yet taken; beyond this the oldest go


def site(payload):
    """'fn (file:line)' of the break's innermost user frame, 'file:line', or ''."""
    text = payload or ""
    start = text.find("User code traceback:")
    if start >= 0:
        end = text.find("\n\n", start)
        frames = _FRAME.findall(text[start:end if end >= 0 else len(text)])
        if frames:
            file, line, fn = frames[-1]
            return f"{fn} ({file}:{line})"
    m = _AT.search(text)
    return f"{m.group(1)}:{m.group(2)}" if m else ""


class GraphBreakSites(Reader):
    def __init__(self, log):
        self._lock = threading.Lock()
        self._pending = []  # (payload, site) in the order torch logged them
        super().__init__(log)

    def record(self, metadata, payload):
        artifact = metadata.get("artifact")
        if not isinstance(artifact, dict) or artifact.get("name") != "dynamo_graph_break_reason":
            return
        where = site(payload)
        if where:
            with self._lock:
                self._pending.append((payload or "", where))
                del self._pending[:-_KEPT]

    def take(self, reason):
        """The site of the oldest untaken break whose record holds `reason`'s first line, or ''."""
        first = str(reason).strip().splitlines()[0] if str(reason).strip() else ""
        with self._lock:
            for i, (payload, where) in enumerate(self._pending):
                if first and first in payload:
                    del self._pending[i]
                    return where
        return ""
