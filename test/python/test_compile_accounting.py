"""What gpuprobe.torch.watch_compile() writes and `gpuprobe report` counts, against torch's own
records (Dynamo's counters and compilation metrics), with PyPI's torch on the CPU: every
graph-break occurrence, the cause and frame of each, recompiles apart from the recompile-limit
warning, eager fallbacks, compile spans as long as torch measures them, and Dynamo's compile
spans in torch.profiler's own traces."""
import json
import os
import pathlib
import subprocess
import time

import pytest

torch = pytest.importorskip("torch")

import gpuprobe  # noqa: E402
import gpuprobe.torch as gt  # noqa: E402
from trace_util import load_events  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"


def report_json(path):
    out = subprocess.run([str(CLI), "report", str(path), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def report_text(path):
    return subprocess.run([str(CLI), "report", str(path)], check=True, capture_output=True,
                          text=True).stdout


def dynamo_counts(group):
    return dict(torch._dynamo.utils.counters[group])


def printing(x):
    x = x + 1
    print("step")  # a graph break Dynamo meets each time it traces this frame
    return x * 2


def test_every_graph_break_is_counted_with_its_cause_and_frame(tmp_path, capsys):
    torch._dynamo.reset()
    before = sum(dynamo_counts("graph_break").values())
    path = tmp_path / "t.json"
    f = torch.compile(printing, backend="eager", dynamic=False)
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={path}"):
            for n in (2, 3, 4, 5):  # four shapes: four traces of the frame, four breaks
                f(torch.ones(n))
                f(torch.ones(n))  # cached: no trace, no break
        report = watcher.report()
    finally:
        watcher.close()
    counted = sum(dynamo_counts("graph_break").values()) - before
    assert counted >= 4
    assert report.graph_break_count == counted

    marks = [e for e in load_events(path) if e["name"].startswith("graph break: ")]
    assert len(marks) == counted
    for m in marks:
        # The cause (print), not only torch's generic title, and the user frame.
        assert "print" in m["name"]
        assert "[in printing (" in m["name"] and "test_compile_accounting.py" in m["name"]
    section = report_json(path)["compile"]
    assert sum(section["graph_breaks"].values()) == counted
    assert f"graph breaks: {counted}," in report_text(path)


def test_recompile_limit_is_not_a_recompile_and_marks_sit_at_their_compile(tmp_path):
    torch._dynamo.reset()
    config = torch._dynamo.config
    name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
    old = getattr(config, name)
    setattr(config, name, 2)
    path = tmp_path / "t.json"
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={path}"):
            f = torch.compile(lambda x: (x * 2).sum(), backend="eager", dynamic=False)
            for n in (2, 3, 4, 5):
                assert f(torch.ones(n)).item() == 2 * n
        report = watcher.report()
    finally:
        watcher.close()
        setattr(config, name, old)
    assert len(report.recompile_limit_hits) >= 1
    section = report_json(path)["compile"]
    assert len(section["recompiles"]) == len(report.recompiles) >= 1
    assert len(section["recompile_limit_hits"]) == len(report.recompile_limit_hits)

    events = load_events(path)
    ranges = {e["name"].split(" ", 1)[1]: e for e in events
              if e["ph"] == "X" and e["name"].startswith("torch.compile ")}
    for mark in (e for e in events if e["ph"] == "i" and e["name"].startswith("recompile ")
                 and not e["name"].startswith("recompile limit")):
        compile_id = mark["name"].split(" ")[1].rstrip(":")
        span = ranges[compile_id]
        # At its own compile, not at the next one or at the end.
        assert span["ts"] - 1 <= mark["ts"] <= span["ts"] + span["dur"]


def test_a_failing_backend_under_suppress_errors_is_reported_as_an_eager_fallback(tmp_path):
    torch._dynamo.reset()

    def exploding_backend(gm, example_inputs):
        raise RuntimeError("backend exploded")

    def sine_plus_one(x):
        return x.sin() + 1

    old = torch._dynamo.config.suppress_errors
    torch._dynamo.config.suppress_errors = True
    path = tmp_path / "t.json"
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={path}"):
            f = torch.compile(sine_plus_one, backend=exploding_backend)
            torch.testing.assert_close(f(torch.ones(3)), torch.ones(3).sin() + 1)
        report = watcher.report()
    finally:
        watcher.close()
        torch._dynamo.config.suppress_errors = old
    assert report.eager_fallbacks == 1
    (fallback,) = report.fallbacks
    assert fallback["frame"].startswith("sine_plus_one (") and "backend exploded" in fallback["error"]
    (listed,) = report_json(path)["compile"]["eager_fallbacks"]
    assert "sine_plus_one" in listed and "backend exploded" in listed
    text = report_text(path)
    assert "EAGER FALLBACK: 1 torch.compile frame failed to compile and ran eagerly" in text
    assert text.index("EAGER FALLBACK") < text.index("torch.compile:")  # first, not buried


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(*[torch.nn.Linear(384, 384) for _ in range(4)])

    def forward(self, x):
        return self.layers(x).relu()


def test_compile_ranges_span_the_compile_as_torch_measures_it(tmp_path):
    torch._dynamo.reset()
    model = Mlp()
    compiled = torch.compile(model)
    x = torch.randn(256, 384)
    path = tmp_path / "t.json"
    seen = len(torch._dynamo.utils.get_compilation_metrics())
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={path}"), torch.no_grad():
            for _ in range(40):  # a program made only of compiled calls
                compiled(x)
        report = watcher.report()
    finally:
        watcher.close()
    metrics = torch._dynamo.utils.get_compilation_metrics()[seen:]
    assert len(metrics) == len(report.compiles) >= 1
    torch_ms = sum((m.end_time_us - m.start_time_us) / 1e3 for m in metrics)
    section = report_json(path)["compile"]
    # The trace's compile time is torch's, to the clock conversion's microseconds.
    assert section["compile_ms"] == pytest.approx(torch_ms, abs=1.0)
    ranges = [e for e in load_events(path) if e["name"].startswith("torch.compile ")]
    assert sum(e["dur"] for e in ranges) / 1e3 == pytest.approx(torch_ms, abs=1.0)
    # The compiled share's denominator is the time outside compiles; nearly all of it is
    # compiled code here, so Amdahl's bound is large, not the 1.46x (a share of 0.32) that
    # missing compile time gave; the rest is Python between the calls, 0.69 to 0.9 measured.
    trace_ms = report_json(path)["duration_ms"]
    assert section["outside_compiles_ms"] == pytest.approx(trace_ms - section["compile_ms"], abs=0.01)
    assert section["compiled_share"] > 0.5
    assert "p = T_execute / (trace - T_compile)" in report_text(path)


PLANTED_S = 0.004
planted_seconds = []  # each planted eager call's time on the program's own clock


@torch._dynamo.disable
def planted_eager_work(y):
    start = time.perf_counter()
    while time.perf_counter() - start < PLANTED_S:
        pass
    planted_seconds.append(time.perf_counter() - start)
    return y


def broken(x):
    y = torch.sin(x) * 2
    y = planted_eager_work(y)  # a graph break: Dynamo runs this eagerly between two graphs
    return torch.cos(y) + 1


def unbroken(x):
    return torch.cos(torch.sin(x) * 2) + 1


def test_graph_break_cost_is_the_eager_time_between_compiled_graphs(tmp_path):
    torch._dynamo.reset()
    calls = 12
    x = torch.randn(1024)
    path = tmp_path / "t.json"
    del planted_seconds[:]
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={path}"), torch.no_grad():
            f, g = torch.compile(broken), torch.compile(unbroken)
            for _ in range(calls):
                f(x)
                g(x)  # no break: its graph runs are never counted as returns to eager
    finally:
        watcher.close()
    gaps = [e for e in load_events(path) if e["name"] == "eager after graph break"]
    # The first call's gap holds the compile of the code after the break: left out.
    assert len(gaps) == calls - 1
    cost = report_json(path)["compile"]["graph_break_cost"]
    assert cost["returns_to_eager"] == calls - 1
    assert cost["t_overhead_ms"] == pytest.approx(sum(e["dur"] for e in gaps) / 1e3, abs=0.01)
    assert cost["t_fallback_ms"] == pytest.approx(cost["t_overhead_ms"] / (calls - 1))
    # T_fallback is the planted eager work, as the program's own clock measured it, to 20 %
    # (the rest is Dynamo's entry into the code after the break).
    planted_ms = sorted(planted_seconds[1:])[len(planted_seconds[1:]) // 2] * 1e3
    assert cost["median_ms"] == pytest.approx(planted_ms, rel=0.2)
    assert 0 < cost["share_of_compiled_code"] < 1
    assert f"T_overhead = N_break x T_fallback = {calls - 1} x" in report_text(path)


def test_torch_profiler_traces_get_the_compile_section_from_dynamos_spans(tmp_path):
    torch._dynamo.reset()
    from torch.profiler import ProfilerActivity, profile, record_function

    model = torch.compile(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()),
                          dynamic=False)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for batch in (4, 4, 4, 8, 8):  # the batch-size change recompiles frame 0
            with record_function("request"):
                model(torch.randn(batch, 64))
    path = tmp_path / "torch_profiler.json"
    prof.export_chrome_trace(str(path))
    spans = [e for e in json.load(open(path))["traceEvents"]
             if e.get("name") == "entire_frame_compile" and e.get("ph") == "X"]
    assert len(spans) == 2
    report = report_json(path)
    section = report["compile"]
    assert section["compiles"] == 2
    assert section["compile_ms"] == pytest.approx(sum(e["dur"] for e in spans) / 1e3, rel=1e-3)
    assert [r.split(":")[0] for r in section["recompiles"]] == ["0/1"]
    # The compile inside a request is named as its cause, not only as idle time.
    slow = report_json_latency(path, "request")
    assert any(c["cause"] == "compile" for o in slow["jitter"]["outliers"] for c in o["causes"])


def report_json_latency(path, name):
    out = subprocess.run([str(CLI), "report", str(path), "--json", "--latency", name,
                          "--threshold-ms", "50"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)
