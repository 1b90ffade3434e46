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


def test_hta_runs_its_gpu_analyses_on_our_kernels(tmp_path):
    """Kernel breakdown, temporal breakdown and idle-time breakdown on a trace with known kernels
    (3 steps x 20 launches on stream 7, written by the real Chrome sink)."""
    writer = BUILD / "test" / "write_synthetic_gpu_trace"
    subprocess.run([str(writer), f"chrome={tmp_path / 'rank0.json'}"], check=True)
    analysis = TraceAnalysis(trace_dir=str(tmp_path))
    trace = analysis.t.get_trace(0)
    names = trace["name"].map(lambda i: analysis.t.symbol_table.get_sym_table()[i])
    # HTA recognises our ProfilerStep#N ranges and, as it does with torch.profiler's traces,
    # analyses all steps but the last (which may be incomplete): steps 0 and 1 here.
    assert set(names[names.str.startswith("ProfilerStep")]) == {"ProfilerStep#0", "ProfilerStep#1"}
    assert (names == "gemm_kernel").sum() == 20
    assert (names == "relu_kernel").sum() == 20
    assert (names == "cudaLaunchKernel").sum() == 40

    kernel_types = analysis.get_gpu_kernel_breakdown(visualize=False)[0]
    assert list(kernel_types["kernel_type"]) == ["COMPUTATION"]
    assert kernel_types["percentage"].sum() == pytest.approx(100.0)

    temporal = analysis.get_temporal_breakdown(visualize=False)
    assert list(temporal["rank"]) == [0]
    assert 0 < temporal["compute_time_pctg"].iloc[0] < 100

    idle = analysis.get_idle_time_breakdown(visualize=False)[0]
    assert set(idle["stream"]) == {7}
    # Kernels start 6 us after launches that are 30 us apart: the GPU waits on the host.
    host_wait = idle[idle["idle_category"] == "host_wait"]["idle_time"].sum()
    assert host_wait > 0
