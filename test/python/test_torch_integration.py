"""gpuprobe.torch with PyPI's torch on the CPU: module ranges (forward and backward), optimizer
steps, the allocator-statistics plumbing, compiled-vs-eager numerics, and the torch.compile
observer on a model with one deliberate graph break and an input-shape change that recompiles."""
import pytest

torch = pytest.importorskip("torch")

import gpuprobe  # noqa: E402
import gpuprobe.torch as gt  # noqa: E402
from trace_util import inside, load_events, named  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


def test_module_ranges_forward_backward_and_optimizer_steps(tmp_path):
    path = tmp_path / "t.json"
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = gt.instrument(model)
    hook = gt.instrument_optimizer(opt)
    with gpuprobe.Session(f"chrome={path}"):
        for _ in range(3):
            loss = model(torch.randn(8, 16)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    handle.remove()
    hook.remove()
    events = load_events(path)
    net = named(events, "Net")
    assert len(net) == 3 and all(e["cat"] == "torch" for e in net)
    for name in ("Net.encoder", "Net.encoder.0", "Net.encoder.1", "Net.head"):
        assert len(named(events, name)) == 3, name
    assert inside(named(events, "Net.encoder.0")[0], named(events, "Net.encoder")[0])
    assert inside(named(events, "Net.encoder")[0], net[0])
    # Backward ranges for the model and the modules with children; a leaf's (Net.head, a Linear)
    # only with backward="all" (test_leaf_backward_ranges_when_asked).
    assert len(named(events, "Net backward")) == 3
    assert len(named(events, "Net.encoder backward")) == 3
    assert not named(events, "Net.head backward")
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    assert [s["name"] for s in steps] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    assert inside(net[1], steps[1])
    # After remove(), nothing more is recorded.
    with gpuprobe.Session(f"chrome={tmp_path / 'after.json'}"):
        model(torch.randn(2, 16))
    assert not named(load_events(tmp_path / "after.json"), "Net")


def test_leaf_backward_ranges_when_asked(tmp_path):
    path = tmp_path / "t.json"
    model = Net()
    handle = gt.instrument(model, backward="all")
    with gpuprobe.Session(f"chrome={path}"):
        model(torch.randn(8, 16)).sum().backward()
    handle.remove()
    events = load_events(path)
    for name in ("Net", "Net.encoder", "Net.encoder.0", "Net.head"):
        assert len(named(events, name + " backward")) == 1, name
    with pytest.raises(ValueError, match="backward must be"):
        gt.instrument(model, backward="leaves")


def test_a_forward_that_raises_does_not_unbalance_later_ranges(tmp_path):
    class Bad(torch.nn.Module):
        def forward(self, x):
            raise ValueError("bad input")

    model = torch.nn.Sequential(Bad())
    gt.instrument(model, prefix="m")
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        with gpuprobe.range("outer"):
            with pytest.raises(ValueError):
                model(torch.zeros(1))
        with gpuprobe.range("after"):
            pass
    events = load_events(path)
    assert named(events, "outer") and named(events, "after")
    assert not inside(named(events, "after")[0], named(events, "outer")[0])


def test_allocator_statistics_become_counters(tmp_path, monkeypatch):
    stats = {"allocated_bytes.all.current": 1 << 20, "reserved_bytes.all.current": 4 << 20,
             "inactive_split_bytes.all.current": 12345, "num_alloc_retries": 2, "num_ooms": 0}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "memory_stats", lambda device=None: stats)
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        values = gt.record_allocator_stats()
    assert values["cuda alloc retries"] == 2 and values["cuda reserved bytes"] == 4 << 20
    events = load_events(path)
    for name, key in gt.ALLOCATOR_COUNTERS:
        (counter,) = named(events, name)
        assert counter["args"][name] == stats[key] and counter["cat"] == "alloc"


def test_allocator_statistics_without_cuda_say_so(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(gt.FeatureUnavailable, match="CUDA is not available"):
        gt.record_allocator_stats()


def test_compare_reports_errors_positions_nans_and_speedup():
    def f(x):
        return torch.sin(x) * 2 + x

    x = torch.randn(64, 64)
    same = gt.compare(f, f, x, warmup=1, runs=3)
    assert same.passed and same.max_abs_error == 0 and same.speedup > 0

    def off(x):
        y = f(x).clone()
        y[3, 5] += 0.5
        y[7, 1] = float("nan")
        return y

    bad = gt.compare(f, off, x, warmup=1, runs=3)
    assert not bad.passed
    assert bad.nan_mismatches == 1
    assert bad.worst[0]["index"] == (3, 5) and bad.worst[0]["abs_error"] == pytest.approx(0.5)
    assert bad.max_abs_error == pytest.approx(0.5)


class BreakingModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.linear(x).relu()
        torch._dynamo.graph_break()  # the one deliberate graph break
        return (y * 2).sum(dim=1)


def test_compile_observer_reports_the_break_and_the_recompile(tmp_path):
    torch._dynamo.reset()
    model = BreakingModel()
    compiled = torch.compile(model, dynamic=False)
    path = tmp_path / "t.json"
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={path}"):
            a, b = torch.randn(4, 8), torch.randn(6, 8)
            out_a = compiled(a)
            compiled(a)  # same shape: no compile
            out_b = compiled(b)  # new shape: recompiles
            gt.step()  # reads the last compile's metrics into the trace
        report = watcher.report()
    finally:
        watcher.close()
    # The observer changes nothing: compiled results equal eager ones.
    torch.testing.assert_close(out_a, model(a))
    torch.testing.assert_close(out_b, model(b))

    assert len(report.graph_breaks) == 1  # exactly the one break
    (reason,) = report.graph_breaks
    assert "graph_break()" in reason
    # Dynamo splits the frame at the break; the shape change recompiles both halves, each with
    # the size mismatch as its reason.
    assert len(report.recompiles) == 2
    assert {r["compile_id"] for r in report.recompiles} == {"0/1", "1/1"}
    for r in report.recompiles:
        assert "size mismatch at index 0. expected 4, actual 6" in r["reason"]
    first_compiles = [c for c in report.compiles if c["recompile_reason"] is None]
    assert len(first_compiles) == 2 and len(report.compiles) == 4
    assert report.eager_fallbacks == 0
    assert report.cache["fxgraph_miss"] + report.cache["fxgraph_hit"] >= 2
    assert report.compile_seconds > 0

    events = load_events(path)
    compile_ranges = [e for e in events if e["name"].startswith("torch.compile")]
    assert len(compile_ranges) == 4 and all(e["cat"] == "compile" for e in compile_ranges)
    recompile_marks = [e for e in events if e["name"].startswith("recompile ")]
    assert len(recompile_marks) == 2
    # One mark per occurrence Dynamo counted: the break is traced again when the shape recompiles.
    breaks = sum(report.graph_breaks.values())
    assert breaks == 2
    assert len([e for e in events if e["name"].startswith("graph break: ")]) == breaks
    # Every run of a compiled graph is a range: three calls, each two graphs (split at the break).
    runs = [e for e in events if e["name"] == "compiled graph (forward)"]
    assert len(runs) == 6 and all(e["cat"] == "torch" for e in runs)

    # The report reads the same story back from the trace.
    import json
    import os
    import pathlib
    import subprocess

    cli = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"
    compile_section = json.loads(subprocess.run([str(cli), "report", str(path), "--json"], check=True,
                                                capture_output=True, text=True).stdout)["compile"]
    assert compile_section["compiles"] == 4 and compile_section["compile_ms"] > 0
    assert len(compile_section["recompiles"]) == 2
    assert all("size mismatch" in r for r in compile_section["recompiles"])
    assert list(compile_section["graph_breaks"].values()) == [breaks]
    # Cache hits + misses: the four frame compiles, each an FX-graph and an AOT lookup (hits when
    # an earlier run left the cache warm).
    assert compile_section["cache_hits"] + compile_section["cache_misses"] >= 4
    assert compile_section["graph_ops"] > 0
    if compile_section["kernels_generated"]:
        assert compile_section["ops_per_kernel"] > 0
    # m, T_execute, B = T_compile / m, the compiled share p and Amdahl's bound 1 / (1 - p).
    assert compile_section["runs"] == 6
    assert 0 < compile_section["execute_ms"] < compile_section["compile_ms"]
    assert compile_section["amortised_ms"] == pytest.approx(compile_section["compile_ms"] / 6)
    p = compile_section["compiled_share"]
    assert 0 < p < 1 and compile_section["amdahl_bound"] == pytest.approx(1 / (1 - p))


def test_recompile_limit_hits_and_eager_fallbacks_are_reported():
    torch._dynamo.reset()
    config = torch._dynamo.config
    name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
    old = getattr(config, name)
    setattr(config, name, 1)
    watcher = gt.watch_compile()
    try:
        f = torch.compile(lambda x: (x * 2).sum(), dynamic=False)
        for n in (2, 3, 4):
            assert f(torch.ones(n)).item() == 2 * n  # still right, run eagerly past the limit
        report = watcher.report()
    finally:
        watcher.close()
        setattr(config, name, old)
    assert len(report.recompile_limit_hits) == 1
    assert "recompile_limit" in report.recompile_limit_hits[0] or "cache_size_limit" in report.recompile_limit_hits[0]
    assert report.eager_fallbacks >= 1


def test_importing_gpuprobe_torch_does_not_need_torch():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # as if torch were not installed\n"
        "import gpuprobe.torch as gt\n"
        "try:\n"
        "    gt.instrument(object())\n"
        "except gt.FeatureUnavailable as e:\n"
        "    print('unavailable:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "unavailable: gpuprobe.torch needs PyTorch" in out
