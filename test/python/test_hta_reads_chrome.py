"""Holistic Trace Analysis (PyPI `traceinsight`, the reader many PyTorch users open traces with)
loads gpuprobe's Chrome traces: the demo's trace, and the torch.profiler directory layout."""
import os
import pathlib
import subprocess

import pytest

from hta.trace_analysis import TraceAnalysis

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))


def run_demo(trace_path):
    demo = BUILD / "examples" / "demo"
    if not demo.exists():
        pytest.fail(f"{demo} is missing: build the project first")
    subprocess.run([str(demo), str(trace_path)], check=True, capture_output=True)


def load(trace_dir):
    analysis = TraceAnalysis(trace_dir=str(trace_dir))
    assert list(analysis.t.traces.keys()) == [0]
    trace = analysis.t.get_trace(0)
    names = analysis.t.symbol_table.get_sym_table()
    return trace, trace["name"].map(lambda i: names[i])


def test_hta_parses_the_demo_trace(tmp_path):
    run_demo(tmp_path / "demo.json")
    trace, names = load(tmp_path)
    counts = names.value_counts()
    # The demo's pipeline: 400 batches loaded and processed, four layers each.
    assert counts["load_batch"] == 400
    assert counts["process_batch"] == 400
    for layer in range(4):
        assert counts[f"layer_{layer}"] == 400
    assert (trace["dur"] >= 0).all()


def test_hta_finds_the_torch_profiler_layout(tmp_path):
    traces = tmp_path / "run"
    run_demo(str(traces) + "/")
    files = list(traces.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".pt.trace.json")
    _, names = load(traces)
    assert (names == "forward").sum() == 400
