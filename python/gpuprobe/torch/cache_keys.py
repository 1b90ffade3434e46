"""Which compile cache missed, and what changed: PyTorch's structured trace (the records
TORCH_TRACE writes, which tlparse reads) read in process. Its `fx_graph_cache_miss` artifact lists
every component of the FX graph cache's key with its hash — the graph, each example input's
dtype/shape/stride, every inductor config value, torch's version, the device — so a miss is
explained by the components whose hash differs from the frame's previous compile: "FX graph:
example_inputs[0] shape (8, 4) -> (16, 4)" or "inductor_config[max_autotune] False -> True".

Reading it means asking torch for its structured records (the `torch.__trace` logger at DEBUG),
which makes each compile format its artifacts (graphs, generated code): about 7 % more compile
time (0.56 -> 0.60 s a compile of a small module on the CPU, interleaved, FX graph cache off),
never the compiled code's runs; `watch_compile(cache_keys=False)` goes without. Where this torch
has no structured trace, the watcher says so once."""
import json
import re

from gpuprobe.torch._common import EVENTS
from gpuprobe.torch.structured_trace import Reader, compile_id, trace_log

# The structured trace's cache artifacts: layer name, outcome.
_ARTIFACTS = {
    "fx_graph_cache_miss": ("FX graph", "miss"),
    "fx_graph_cache_hit": ("FX graph", "hit"),
    "fx_graph_cache_bypass": ("FX graph", "bypass"),
    "aotautograd_cache_miss": ("AOTAutograd", "miss"),
    "aotautograd_cache_hit": ("AOTAutograd", "hit"),
    "aotautograd_cache_bypass": ("AOTAutograd", "bypass"),
}
_COMPONENT = re.compile(r"\[(\w+)\] ([^:]+): (.*)", re.S)
_TENSOR = re.compile(r"dtype=torch\.(\w+), shape=torch\.Size\(\[([^\]]*)\]\), stride=\(([^)]*)\)")
_MAX_CHANGES = 8  # components named per miss; the rest counted


def components(payload):
    """{component name: (hash, value)} from a cache artifact's payload."""
    out = {}
    for text in payload.get("components") or ():
        m = _COMPONENT.match(str(text))
        if m:
            out[m.group(2)] = (m.group(1), m.group(3))
    return out


def describe(value):
    """A component's value on one line: a tensor's dtype, shape and stride, else its start."""
    m = _TENSOR.search(value)
    if m:
        shape = m.group(2).replace(" ", "")
        stride = m.group(3).replace(" ", "")
        return f"{m.group(1)} ({shape}) stride ({stride})"
    value = " ".join(value.split())
    return value if len(value) <= 80 else value[:77] + "..."


def changed(before, after):
    """[(component, before, after)] of the components whose hash differs (or that one lacks),
    the graph's own code ("gm", which also changes with the inputs' shapes when it prints them)
    last and by its hash."""
    out, graph = [], None
    for name in list(after) + [n for n in before if n not in after]:
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old[0] == new[0]:
            continue
        if name == "gm":
            graph = ("gm (the FX graph's code)", old[0][:8] if old else "(absent)",
                     new[0][:8] if new else "(absent)")
            continue
        out.append((name, describe(old[1]) if old else "(absent)",
                    describe(new[1]) if new else "(absent)"))
    return out + [graph] if graph else out


class CacheKeys(Reader):
    """Attached to torch's structured trace logger while a watcher is open: each cache outcome
    becomes an instant in category compile ("cache miss <id> FX graph: <changes>", "cache hit
    <id> FX graph") and an entry of ``events``."""

    def __init__(self, log):
        self._last = {}  # (frame id, layer) -> the components of its last compile
        # (layer, the graph's hash) -> the components of its last compile: the same graph again
        # after torch._dynamo.reset() (a new frame id), e.g. under another inductor config
        self._by_graph = {}
        self._seen = set()  # (frame id, layer) compiled since watching
        self.events = []  # {"compile_id", "layer", "outcome", "changed": [...], "key"}
        super().__init__(log)

    def record(self, metadata, payload):
        artifact = metadata.get("artifact")
        if not isinstance(artifact, dict) or artifact.get("name") not in _ARTIFACTS:
            return
        layer, outcome = _ARTIFACTS[artifact["name"]]
        self._record(compile_id(metadata), metadata.get("frame_id"), layer, outcome,
                     json.loads(payload or "{}"))

    def _record(self, cid, frame, layer, outcome, payload):
        now = components(payload)
        event = {"compile_id": cid, "layer": layer, "outcome": outcome, "changed": [],
                 "key": payload.get("key")}
        graph = (layer, now["gm"][0]) if "gm" in now else None
        before = self._last.get((frame, layer)) or self._by_graph.get(graph)
        first = before is None and (frame, layer) not in self._seen
        self._seen.add((frame, layer))
        if outcome == "hit":
            name = f"{EVENTS['cache_hit']}{cid} {layer}"
        else:
            if first:
                what = "first compile of this frame since watching"
            elif before is None or not now:  # this layer lists no components
                what = payload.get("cache_status_detailed") or outcome
            else:
                event["changed"] = changed(before, now)
                parts = [f"{c} {a} -> {b}" for c, a, b in event["changed"][:_MAX_CHANGES]]
                more = len(event["changed"]) - _MAX_CHANGES
                what = "; ".join(parts) + (f"; and {more} more" if more > 0 else "") or \
                    "no component changed (a key the frame had before, evicted)"
            if outcome == "bypass":
                what = f"bypassed: {payload.get('cache_bypass_reason') or what}"
            name = f"{EVENTS['cache_miss']}{cid} {layer}: {what}"
        if now:
            self._last[(frame, layer)] = now
            if graph is not None:
                self._by_graph[graph] = now
        self.events.append(event)
        self.out.instant(name[:600], "compile")


def watch(unavailable):
    """A CacheKeys on this torch's structured trace, or None with the reason in `unavailable`."""
    log = trace_log(unavailable, "no cache-key changes")
    return CacheKeys(log) if log is not None else None
