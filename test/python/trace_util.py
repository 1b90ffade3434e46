"""Reading back the Chrome traces the Python tests write."""
import json


def load_events(path):
    """The trace's complete events, instants and counters, each with ts/dur in microseconds."""
    with open(path) as f:
        trace = json.load(f)
    return [e for e in trace["traceEvents"] if e.get("ph") in ("X", "i", "C")]


def thread_names(path):
    """{tid: the name the trace's metadata gives that thread (or asyncio task's track)}."""
    with open(path) as f:
        trace = json.load(f)
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def named(events, name):
    return [e for e in events if e.get("name") == name]


def inside(inner, outer):
    """True when `inner` lies within `outer` on the same thread."""
    return (inner["tid"] == outer["tid"] and outer["ts"] <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3)
