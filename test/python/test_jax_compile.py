"""gpuprobe.jax.watch_compile() on the CPU with JAX from PyPI: a jit recompiled by a shape change
shows each compile's phases as ranges on the timeline, and in a second process the persistent
compilation cache's hit turns the backend compile into a load — told apart by the cache events,
as JAX's own duration for it is not zero. `gpuprobe report` and the metrics count both, apart
from torch.compile's."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("jax", reason="skipped: JAX is not installed (pip install jax)")

import gpuprobe  # noqa: E402
import gpuprobe.jax as gj  # noqa: E402
from trace_util import load_events  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"


def report_json(path):
    return json.loads(subprocess.run([str(CLI), "report", "--json", str(path)], check=True,
                                     capture_output=True, text=True).stdout)


def _phases(events, fun):
    return sorted(e["name"] for e in events if e.get("ph") == "X" and e["name"].endswith(fun)
                  and e["name"].startswith("jax "))


def test_a_shape_change_compiles_again_and_every_phase_is_a_range(tmp_path):
    import jax
    import jax.numpy as jnp

    def scaled(x):
        return jnp.sin(x) * 2 + x.sum()

    f = jax.jit(scaled)
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"), gj.watch_compile() as watcher:
        f(jnp.ones(8)).block_until_ready()
        f(jnp.ones(8)).block_until_ready()  # same shape: no compile
        f(jnp.ones(16)).block_until_ready()  # a new shape: compiled again
        report = watcher.report()
    mine = [c for c in report.compiles if c["fun_name"] == "jit(scaled)"]
    assert len(mine) == 2, report.compiles
    assert all(c["seconds"] > 0 for c in mine)
    assert report.phase_seconds["trace"] > 0 and report.phase_seconds["lower"] > 0
    assert report.compile_seconds >= sum(c["seconds"] for c in mine)
    events = load_events(path)
    assert _phases(events, "jit(scaled)") == ["jax backend compile: jit(scaled)"] * 2 + [
        "jax lower: jit(scaled)"] * 2
    assert len([e for e in events if e.get("name") == "jax trace: scaled"]) == 2
    # On gpuprobe's clock, in the order JAX ran them: trace, lower, backend compile.
    spans = sorted((e["ts"], e["name"].split(":")[0]) for e in events
                   if e.get("ph") == "X" and e["name"] in (
                       "jax trace: scaled", "jax lower: jit(scaled)",
                       "jax backend compile: jit(scaled)"))
    assert [name for _, name in spans] == ["jax trace", "jax lower", "jax backend compile"] * 2
    assert all(e["cat"] == "compile" for e in events if e["name"].startswith("jax "))
    # The report counts JAX's compiles apart from torch.compile's, phase by phase.
    section = report_json(path)["compile"]
    assert section["compiles"] == 0
    jax_ = section["jax"]
    backend = [c for c in report.compiles if c["cache"] is None or c["cache"] == "miss"]
    assert jax_["compiles"] == len(backend) >= 2 and jax_["cache_loads"] == 0
    for phase in ("trace", "lower", "backend compile"):
        assert jax_["phase_seconds"][phase] == pytest.approx(report.phase_seconds[phase],
                                                             rel=1e-3, abs=2e-6), phase


CHILD = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp
    import gpuprobe, gpuprobe.jax as gj
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    def scaled(x):
        return jnp.cos(x) * 3 + x.max()
    with gpuprobe.Session("chrome=" + sys.argv[2]), gj.watch_compile() as w:
        jax.jit(scaled)(jnp.ones(32)).block_until_ready()
        r = w.report()
    print(json.dumps({"hits": r.cache_hits, "misses": r.cache_misses,
                      "compiles": [c for c in r.compiles if c["fun_name"] == "jit(scaled)"],
                      "retrieval": r.retrieval_seconds, "saved": r.time_saved_seconds}))
""")


def test_a_persistent_cache_hit_in_a_second_process_is_a_load(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    runs = []
    for i in range(2):
        trace = tmp_path / f"run{i}.json"
        out = subprocess.run([sys.executable, "-c", CHILD, str(cache), str(trace)],
                             capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append((json.loads(out.stdout.strip().splitlines()[-1]), load_events(trace)))
    (first, first_events), (second, second_events) = runs
    assert first["misses"] >= 1 and [c["cache"] for c in first["compiles"]] == ["miss"], first
    assert second["hits"] >= 1 and [c["cache"] for c in second["compiles"]] == ["hit"], second
    assert second["retrieval"] > 0, second
    names = [e["name"] for e in second_events]
    assert "jax cache load: jit(scaled)" in names
    assert "jax backend compile: jit(scaled)" not in names
    assert "jax compilation cache hit" in names
    assert "jax backend compile: jit(scaled)" in [e["name"] for e in first_events]
    assert "jax compilation cache miss" in [e["name"] for e in first_events]
    # The report and the metrics: the second run's compile was a load.
    second_report = report_json(tmp_path / "run1.json")["compile"]["jax"]
    # (jax.numpy's own jitted helpers hit the cache too)
    assert second_report["cache_loads"] == second_report["cache_hits"] == second["hits"] >= 1
    assert second_report["compiles"] == second["misses"]
    assert report_json(tmp_path / "run0.json")["compile"]["jax"]["cache_misses"] == first["misses"]


def test_jax_compiles_become_metrics(tmp_path):
    import jax
    import jax.numpy as jnp

    prom = tmp_path / "m.prom"
    with gpuprobe.Session(f"metrics_file={prom}"), gj.watch_compile() as watcher:
        jax.jit(lambda x: jnp.tanh(x) + 1)(jnp.ones(4)).block_until_ready()
        report = watcher.report()
    text = prom.read_text()
    backend = [c for c in report.compiles if c["cache"] != "hit"]
    assert f'gpuprobe_jax_compile_duration_seconds_count{{phase="backend compile"}} {len(backend)}' \
        in text.splitlines()
    assert 'gpuprobe_jax_compile_duration_seconds_count{phase="trace"}' in text
    assert "gpuprobe_compile_duration_seconds_count" not in text  # not torch.compile's
    if shutil.which("promtool") is not None:
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
