"""A TORCH_TRACE log recorded without gpuprobe, read after the fact and joined to a trace by
time, so that a run nobody watched in process still gets the report's compile section: each
compile's range, why it happened (the guard that failed), each cache layer's outcome with the key
components that changed, its phases, the code it generated, restarts, eager fallbacks and every
graph break with its line of user code.

The log is interpreted by the readers `watch_compile()` uses in process (cache_keys.py,
compile_phases.py, generated_code.py, graph_break_sites.py and compile.mark_compile) — one
interpretation — which here write events at the log's own times instead of into a session.
Times: Dynamo's spans and the compilation metrics carry wall-clock microseconds; every other
record is placed at its line's glog time (local time, to the microsecond, its year the log
file's). The joined events go on the trace's own process, a thread per logging thread.

    python -m gpuprobe.torch.torch_trace TORCH_TRACE_DIR --join TRACE -o JOINED.json
    gpuprobe report JOINED.json
    gpuprobe.report(TRACE, torch_trace=TORCH_TRACE_DIR)       # the same, in one call
"""
import argparse
import gzip
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import types

from gpuprobe.torch._common import EVENTS
from gpuprobe.torch.cache_keys import CacheKeys
from gpuprobe.torch.compile import graph_break_mark, mark_compile
from gpuprobe.torch.compile_phases import CompilePhases
from gpuprobe.torch.generated_code import GeneratedCode
from gpuprobe.torch.graph_break_sites import site

# glog's prefix: level, MMDD hh:mm:ss.uuuuuu, thread, file:line]
_PREFIX = re.compile(r"^[VIWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) +(\d+) [^\]]*\] ")
_REASON = re.compile(r"Graph Break Reason: (.*?)(?:\n\nUser code traceback:|\Z)", re.S)


def _logs(path):
    path = pathlib.Path(path)
    if path.is_dir():
        logs = sorted(path.glob("*.log"))
        if not logs:
            raise FileNotFoundError(f"{path} holds no TORCH_TRACE log (*.log)")
        return logs
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such TORCH_TRACE log or directory")
    return [path]


def records(path):
    """(metadata, payload or None, wall-clock ns, logging thread) of each record of a TORCH_TRACE
    log, or of each log in a directory, in the order written. A line that is neither a record
    nor its payload (a damaged log) is skipped."""
    for log in _logs(path):
        mtime = log.stat().st_mtime
        year = time.localtime(mtime).tm_year
        head, payload = None, []
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in list(f) + [None]:
                if line is not None and line.startswith("\t"):
                    if head is not None:
                        payload.append(line[1:])
                    continue
                if head is not None:
                    text = "".join(payload)
                    yield head[0], (text[:-1] if text.endswith("\n") else text) if payload \
                        else None, head[1], head[2]
                head, payload = None, []
                m = _PREFIX.match(line or "")
                if not m:
                    continue
                try:
                    metadata = json.loads(line[m.end():])
                except ValueError:
                    continue
                month, day, hh, mm, ss, us, thread = (int(g) for g in m.groups())
                seconds = time.mktime((year, month, day, hh, mm, ss, 0, 0, -1))
                if seconds > mtime + 86400:  # a log begun in December, written to in January
                    seconds = time.mktime((year - 1, month, day, hh, mm, ss, 0, 0, -1))
                head = (metadata, int(seconds) * 1_000_000_000 + us * 1000, thread)


class _Events:
    """The functions of gpuprobe._core that the readers call, keeping Chrome trace events at the
    log's times (wall-clock ns; `now`: the record being read) on `thread`."""

    def __init__(self):
        self.events = []
        self.now = 0
        self.thread = 0

    def _add(self, ph, name, category, ns, **fields):
        self.events.append(dict(ph=ph, name=name, cat=category, wall_ns=ns, tid=self.thread,
                                **fields))

    def instant(self, name, category="python"):
        self._add("i", name, category, self.now, s="t")

    def _instant_at(self, name, category, ns):
        self._add("i", name, category, ns, s="t")

    def _range_at(self, name, category, begin_ns, end_ns):
        self._add("X", name, category, begin_ns, dur=max(end_ns - begin_ns, 0) / 1e3)

    def counter(self, name, value, category="python"):
        self._add("C", name, category, self.now, args={name: value})


def _graph_break_reason(payload):
    """The reason in a dynamo_graph_break_reason artifact, as Dynamo counts it (the text after
    its "Encountered graph break when attempting to trace ...:" heading)."""
    m = _REASON.search(payload or "")
    reason = m.group(1) if m else (payload or "")
    heading, sep, rest = reason.partition(":\n\n")
    return rest if sep and heading.startswith("Encountered graph break") else reason


def read(path, damaged=None):
    """The events gpuprobe.torch would have recorded in process, from a TORCH_TRACE log or
    directory: a list of Chrome-trace-like dicts with `wall_ns` (ns since the epoch) and `tid`.
    A record that cannot be what torch wrote (a cut or damaged log) is skipped, and counted in
    `damaged` (a one-element list) when given."""
    out = _Events()
    cache_keys = CacheKeys(None)
    readers = [cache_keys, CompilePhases(None), GeneratedCode(None)]
    for reader in readers:
        reader.out = out
    graph_ops = 0
    for metadata, payload, ns, thread in records(path):
        out.now, out.thread = ns, thread
        try:
            for reader in readers:
                reader.record(metadata, payload)
        except (ValueError, TypeError, AttributeError, KeyError):
            if damaged is not None:
                damaged[0] += 1
            continue
        artifact = metadata.get("artifact")
        name = artifact.get("name") if isinstance(artifact, dict) else None
        if name == "dynamo_graph_break_reason":
            out.instant(graph_break_mark(_graph_break_reason(payload), site(payload)), "compile")
        metrics = metadata.get("compilation_metrics")
        if isinstance(metrics, dict):
            mark_compile(types.SimpleNamespace(**metrics), out)
            graph_ops += metrics.get("graph_op_count") or 0
            # Totals so far, as the watcher writes them after each compile (FX graph and
            # AOTAutograd hits and misses together, as Dynamo's counters give them).
            outcomes = [e["outcome"] for e in cache_keys.events]
            hits, misses = outcomes.count("hit"), outcomes.count("miss")
            for counter, value in ((EVENTS["cache_hits"], hits), (EVENTS["cache_misses"], misses),
                                   (EVENTS["graph_ops"], graph_ops)):
                out.counter(counter, value, "compile")
    out.events.sort(key=lambda e: e["wall_ns"])
    return out.events


def _load_chrome(trace, cli):
    """A trace as Chrome JSON (dict): read as it is, or converted by `gpuprobe convert`."""
    opener = gzip.open if str(trace).endswith(".gz") else open
    try:
        with opener(trace, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and "traceEvents" in data:
            return data
    except (ValueError, OSError, UnicodeDecodeError):
        pass
    with tempfile.TemporaryDirectory() as tmp:
        converted = pathlib.Path(tmp) / "trace.json"
        done = subprocess.run([cli, "convert", str(trace), str(converted)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise RuntimeError(f"gpuprobe convert {trace}: {done.stderr.strip()}")
        return json.loads(converted.read_text())


def join(trace, torch_trace, out, cli=None):
    """Writes to `out` (Chrome JSON) the trace `trace` (any format gpuprobe reads) with the
    compile events of the TORCH_TRACE log or directory `torch_trace` placed at their times.
    Returns (how many events were joined, how many damaged records were skipped, whether
    none of them falls within the trace's events' span: a log and a trace of different runs)."""
    if cli is None:
        from gpuprobe._report import cli as find_cli

        cli = find_cli()
    data = _load_chrome(trace, cli)
    events = data["traceEvents"]
    base_ns = int(data.get("baseTimeNanoseconds", 0))
    pid = next((e.get("pid") for e in events if e.get("ph") != "M" and "pid" in e), 0)
    damaged = [0]
    joined = read(torch_trace, damaged)
    timed = [e for e in events if e.get("ph") != "M" and "ts" in e]
    first = min((e["ts"] for e in timed), default=None)
    last = max((e["ts"] + e.get("dur", 0) for e in timed), default=None)
    inside = 0
    for e in joined:
        e = dict(e)
        e["ts"] = (e.pop("wall_ns") - base_ns) / 1e3
        e["pid"] = pid
        inside += first is not None and first <= e["ts"] <= last
        events.append(e)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return len(joined), damaged[0], bool(joined) and inside == 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gpuprobe.torch.torch_trace",
        description="Join a TORCH_TRACE log (recorded without gpuprobe) to a trace by time, for "
                    "`gpuprobe report`'s compile section.")
    parser.add_argument("torch_trace", help="the TORCH_TRACE directory, or one of its logs")
    parser.add_argument("--join", required=True, metavar="TRACE",
                        help="the trace to join it to (any format gpuprobe reads)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.json",
                        help="the joined trace (Chrome JSON)")
    args = parser.parse_args(argv)
    try:
        n, damaged, apart = join(args.join, args.torch_trace, args.output)
    except (OSError, RuntimeError) as e:
        print(f"gpuprobe: {e}", file=sys.stderr)
        return 1
    print(f"{args.output}: {n} compile events from {args.torch_trace} joined to {args.join}" +
          (f"; {damaged} damaged records skipped" if damaged else ""))
    if apart:
        print(f"gpuprobe: none of the {n} compile events falls within the trace's span: are the "
              f"log and the trace of the same run?", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
