"""gpuprobe.torch's compile events and watch_gc's pauses as Prometheus metrics: the counts the
metrics file shows are those torch.compile and the collector produced, and promtool accepts it."""
import gc
import re
import shutil
import subprocess

import pytest

import gpuprobe

torch = pytest.importorskip("torch")
import gpuprobe.torch as gt  # noqa: E402


def value(text, sample):
    m = re.search(r"^" + re.escape(sample) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def twice(x):
    return x * 2


def test_compiles_recompiles_and_gc_pauses_reach_the_metrics_file(tmp_path):
    torch._dynamo.reset()
    path = tmp_path / "m.prom"
    f = torch.compile(twice, backend="eager", dynamic=False)
    watcher = gt.watch_compile()
    gpuprobe.watch_gc()
    try:
        with gpuprobe.Session(f"metrics_file={path}"):
            for n in (2, 3):  # a compile, then a recompile for the new shape
                f(torch.ones(n))
            gc.collect()
            with gpuprobe.range("request"):
                pass
        report = watcher.report()
    finally:
        watcher.close()
        gpuprobe.unwatch_gc()
    text = path.read_text()
    assert value(text, "gpuprobe_compile_duration_seconds_count") == len(report.compiles)
    assert value(text, "gpuprobe_compile_recompiles_total") == len(report.recompiles) >= 1
    # Why, by the kind of guard: the new shape; and the phases' time (the cache layers' outcomes:
    # test_compile_cache_keys.py, with Inductor).
    assert value(text, 'gpuprobe_compile_recompile_reasons_total{reason="size"}') == \
        len(report.recompiles)
    assert value(text, 'gpuprobe_compile_phase_seconds_total{phase="Dynamo"}') > 0
    assert value(text, 'gpuprobe_gc_pause_seconds_count{generation="2"}') >= 1
    assert value(text, 'gpuprobe_range_duration_seconds_count{name="request"}') == 1
    assert "name=\"torch.compile" not in text  # per-compile names are not label values
    if shutil.which("promtool") is None:
        pytest.skip("skipped: promtool not installed (Debian package prometheus)")
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr
