"""`gpuprobe report` cross-checked against HTA (PyPI traceinsight) on the same trace: kernel totals
and the idle-time breakdown per stream agree (HTA analyses all steps but the last, so the report
is asked for the same steps with --steps); plus the report's JSON on the demo's real trace."""
import json
import os
import pathlib
import subprocess

import pytest

from hta.trace_analysis import TraceAnalysis

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))


def report(*args):
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", *map(str, args), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_kernel_totals_and_idle_breakdown_agree_with_hta(tmp_path):
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"chrome={tmp_path / 'r.json'}"],
                   check=True)
    hta = TraceAnalysis(trace_dir=str(tmp_path))
    kernels = hta.get_gpu_kernel_breakdown(visualize=False)[1]
    hta_kernels = dict(zip(kernels["name"], kernels["sum (us)"]))
    idle = hta.get_idle_time_breakdown(visualize=False)[0]
    hta_idle = {row.idle_category: row.idle_time for row in idle.itertuples()}

    ours = report(tmp_path / "r.json", "--steps", "0-1")
    our_kernels = {k["name"]: k["total_ms"] * 1000 for k in ours["kernels"]}
    assert our_kernels.keys() == hta_kernels.keys()
    for name, us in hta_kernels.items():
        assert our_kernels[name] == pytest.approx(us, rel=0.01)
    (stream,) = ours["gpu"]["streams"]
    assert stream["stream"] == 7
    assert stream["host_wait_ms"] * 1000 == pytest.approx(hta_idle["host_wait"], rel=0.01)
    assert stream["kernel_wait_ms"] * 1000 == pytest.approx(hta_idle.get("kernel_wait", 0), abs=0.01)
    assert stream["other_idle_ms"] * 1000 == pytest.approx(hta_idle.get("other", 0), abs=0.01)
    assert ours["verdict"].startswith("CPU-bound")


def test_report_on_the_demo_trace(tmp_path):
    subprocess.run([str(BUILD / "examples" / "demo"), str(tmp_path / "demo.json")], check=True,
                   capture_output=True)
    r = report(tmp_path / "demo.json")
    assert r["schema"] == "gpuprobe.report/1"
    ranges = {x["name"]: x for x in r["ranges"]}
    assert ranges["load_batch"]["calls"] == 400 and ranges["process_batch"]["calls"] == 400
    for row in r["latency"]:
        assert row["p50_ms"] <= row["p90_ms"] <= row["p99_ms"] <= row["p999_ms"] <= row["max_ms"] + 1e-9
    assert r["jitter"]["range"] in ranges
    text = subprocess.run([str(BUILD / "gpuprobe"), "report", str(tmp_path / "demo.json"), "--limit", "3"],
                          check=True, capture_output=True, text=True).stdout
    assert "latency by range name" in text and "jitter:" in text
