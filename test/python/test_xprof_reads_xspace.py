"""XProf (PyPI `xprof`, the TensorBoard profile plugin's engine) converts the XSpace the
TensorBoard sink wrote into its trace viewer's data, with our threads, streams and events in it."""
import collections
import json
import os
import pathlib
import subprocess

from xprof.convert import raw_to_tool_data

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))


def test_xprof_trace_viewer_shows_our_timeline(tmp_path):
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"tensorboard={tmp_path}"],
                   check=True)
    paths = list(tmp_path.glob("plugins/profile/*/*.xplane.pb"))
    assert len(paths) == 1
    assert "trace_viewer@" in raw_to_tool_data.xspace_to_tool_names(paths)
    data, content_type = raw_to_tool_data.xspace_to_tool_data(paths, "trace_viewer", {})
    assert content_type == "application/json" and data
    trace = json.loads(data)
    events = trace["traceEvents"]
    names = collections.Counter(e.get("name") for e in events if e.get("ph") == "X")
    assert names["gemm_kernel"] == 30 and names["relu_kernel"] == 30
    assert names["cudaLaunchKernel"] == 60
    assert names["forward"] == 3
    assert {f"ProfilerStep#{i}" for i in range(3)} <= set(names)
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert set(processes.values()) == {"/host:CPU", "/device:GPU:0"}
    threads = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {"main", "Stream #7"} <= threads
    gemm = next(e for e in events if e.get("name") == "gemm_kernel")
    assert abs(gemm["dur"] - 20.0) < 1e-6  # microseconds
    assert gemm["pid"] == next(p for p, n in processes.items() if n == "/device:GPU:0")
