"""gpuprobe as the NVTX tool (libgpuprobe_nvtx.so through NVTX_INJECTION64_PATH) of programs not
written for it: a C++ program with plain NVTX3 calls (test/nvtx/nvtx_program.cc, checked by
test/nvtx/check_nvtx_injection.py) and a Python script using torch.cuda.nvtx, which works
without a GPU."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")).resolve()
LIBRARY = BUILD / "libgpuprobe_nvtx.so"
PROGRAM = BUILD / "test" / "nvtx_program"
HERE = pathlib.Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(
    not LIBRARY.exists(),
    reason=f"no {LIBRARY}: gpuprobe was built without the NVTX3 headers (GPUPROBE_NVTX_INCLUDE_DIR)")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROBE")}
    env.update(extra)
    return env


def test_native_program_not_linked_with_gpuprobe():
    if not PROGRAM.exists():
        pytest.skip(f"no {PROGRAM} (build the nvtx_program target)")
    sys.path.insert(0, str(HERE.parent / "nvtx"))
    try:
        import check_nvtx_injection as check
    finally:
        sys.path.pop(0)
    subprocess.run([sys.executable, check.__file__, str(PROGRAM), str(LIBRARY)], check=True,
                   env=clean_env(), timeout=300)


SCRIPT = textwrap.dedent("""
    import threading
    import torch
    import torch.cuda.nvtx as nvtx

    with nvtx.range("epoch"):
        for i in range(3):
            nvtx.range_push(f"step {i}")
            torch.ones(64).sum()
            nvtx.range_pop()
    nvtx.mark("done")
    rid = nvtx.range_start("handed over")
    t = threading.Thread(target=lambda: nvtx.range_end(rid))
    t.start()
    t.join()
""")


def test_torch_cuda_nvtx_ranges_are_captured(tmp_path):
    pytest.importorskip("torch")
    trace = tmp_path / "torch_nvtx.json"
    env = clean_env(NVTX_INJECTION64_PATH=str(LIBRARY), GPUPROBE=f"chrome={trace}")
    subprocess.run([sys.executable, "-c", SCRIPT], check=True, env=env, timeout=600)
    data = json.loads(trace.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    ranges = {}
    for e in events:
        if e.get("ph") == "X":
            ranges.setdefault(e["name"], []).append(e)
    assert len(ranges.get("epoch", [])) == 1, sorted(ranges)
    epoch = ranges["epoch"][0]
    for i in range(3):
        (step,) = ranges[f"step {i}"]
        assert step["tid"] == epoch["tid"]
        assert epoch["ts"] <= step["ts"] and step["ts"] + step["dur"] <= epoch["ts"] + epoch["dur"]
    assert len(ranges.get("handed over", [])) == 1
    assert any(e.get("name") == "done" and e.get("ph") in ("i", "I") for e in events)
