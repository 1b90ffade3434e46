"""Which compile cache missed and what changed (gpuprobe.torch's reading of PyTorch's structured
trace): a recompile for a new shape, for a new dtype, and a compile under a changed inductor
config value each name the key component that changed, in the watcher's report, on the timeline
and in `gpuprobe report`'s compile section."""
import json
import os
import pathlib
import subprocess

import pytest

import gpuprobe

torch = pytest.importorskip("torch")
import gpuprobe.torch as gt  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"


def body(x):
    return torch.sin(x) * 2 + 1


@pytest.fixture
def fresh_caches(tmp_path, monkeypatch):
    # Every compile a real one: no FX graph or AOTAutograd entry from an earlier run.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def misses(report, layer="FX graph"):
    return [e for e in report.cache_events if e["layer"] == layer and e["outcome"] == "miss"]


def run(tmp_path, calls):
    """Calls under a watcher and a Session; the report and the trace's compile-cache instants."""
    trace = tmp_path / "trace.json"
    watcher = gt.watch_compile()
    try:
        with gpuprobe.Session(f"chrome={trace},metrics_file={tmp_path / 'metrics.prom'}"):
            calls()
        report = watcher.report()
    finally:
        watcher.close()
    if report.cache_events == [] and any("structured trace" in u for u in watcher.unavailable):
        pytest.skip("skipped: this torch has no structured trace")
    names = [e["name"] for e in json.loads(trace.read_text())["traceEvents"]
             if e.get("ph") == "i" and e["name"].startswith(("cache miss", "cache hit"))]
    return report, names, trace


def test_a_new_shape_is_named_as_the_changed_component(tmp_path, fresh_caches):
    f = torch.compile(body, dynamic=False)
    report, names, trace = run(tmp_path, lambda: (f(torch.ones(8, 4)), f(torch.ones(16, 4))))
    fx = misses(report)
    assert [e["compile_id"] for e in fx] == ["0/0", "0/1"]
    assert fx[1]["changed"] == [("example_inputs[0]", "float32 (8,4) stride (4,1)",
                                 "float32 (16,4) stride (4,1)")]
    assert "cache miss 0/0 FX graph: first compile of this frame since watching" in names
    assert ("cache miss 0/1 FX graph: example_inputs[0] float32 (8,4) stride (4,1) -> float32 "
            "(16,4) stride (4,1)") in names
    text = subprocess.run([str(CLI), "report", str(trace)], capture_output=True, text=True,
                          check=True).stdout
    assert "FX graph cache: 0 hits, 2 misses" in text
    assert "0/1: example_inputs[0] float32 (8,4) stride (4,1) -> float32 (16,4)" in text
    data = json.loads(subprocess.run([str(CLI), "report", "--json", str(trace)],
                                     capture_output=True, text=True, check=True).stdout)
    layers = data["compile"]["cache_layers"]
    assert layers["FX graph"] == {"hits": 0, "misses": 2, "bypasses": 0}
    assert any(m.startswith("0/1 FX graph: example_inputs[0]")
               for m in data["compile"]["cache_misses_explained"])
    # The metrics count each layer's outcomes as the watcher saw them.
    metrics = (tmp_path / "metrics.prom").read_text().splitlines()
    for layer in ("FX graph", "AOTAutograd"):
        misses_seen = sum(1 for e in report.cache_events
                          if e["layer"] == layer and e["outcome"] == "miss")
        assert misses_seen >= 1
        assert (f'gpuprobe_compile_cache_lookups_total{{layer="{layer}",outcome="miss"}} '
                f'{misses_seen}') in metrics, layer
    assert 'gpuprobe_compile_recompile_reasons_total{reason="size"} 1' in metrics


def test_a_new_dtype_is_named(tmp_path, fresh_caches):
    f = torch.compile(body, dynamic=False)
    report, names, _ = run(tmp_path, lambda: (f(torch.ones(8, 4)),
                                              f(torch.ones(8, 4, dtype=torch.float64))))
    changed = misses(report)[1]["changed"]
    assert changed == [("example_inputs[0]", "float32 (8,4) stride (4,1)",
                        "float64 (8,4) stride (4,1)")]


def test_a_changed_inductor_config_value_is_named(tmp_path, fresh_caches):
    import torch._inductor.config as inductor_config

    def calls():
        torch.compile(body, dynamic=False)(torch.ones(8, 4))
        torch._dynamo.reset()  # the same function compiled afresh, under another config
        with inductor_config.patch({"fallback_random": not inductor_config.fallback_random}):
            torch.compile(body, dynamic=False)(torch.ones(8, 4))

    report, names, _ = run(tmp_path, calls)
    second = misses(report)[-1]
    components = [c for c, _, _ in second["changed"]]
    assert components == ["inductor_config[fallback_random]"], second
    assert second["changed"][0][1:] == ("False", "True")
