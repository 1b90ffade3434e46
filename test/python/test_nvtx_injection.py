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



LATE_SESSION = textwrap.dedent("""
    import sys
    import torch
    import gpuprobe
    torch.cuda.nvtx.range_push("before any session")  # this module binds NVTX now
    torch.cuda.nvtx.range_pop()
    with gpuprobe.Session("chrome=" + sys.argv[1]):
        torch.cuda.nvtx.range_push("inside the session")
        torch.cuda.nvtx.range_pop()
""")


def test_library_hands_nvtx_to_the_python_copy_even_before_its_session(tmp_path):
    """libgpuprobe_nvtx.so named in NVTX_INJECTION64_PATH of a Python process binds each NVTX
    module to gpuprobe._core, which is loaded, even when no session records yet (a module binds
    once, at its first NVTX call): a later Session records the module's ranges."""
    script = tmp_path / "late.py"
    script.write_text(LATE_SESSION)
    trace = tmp_path / "late.json"
    subprocess.run([sys.executable, str(script), str(trace)], check=True, cwd=tmp_path,
                   env=clean_env(NVTX_INJECTION64_PATH=str(LIBRARY)), timeout=300)
    with open(trace, encoding="utf-8") as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    assert "inside the session" in names and "before any session" not in names, names


FORK_CHILD = textwrap.dedent("""
    import ctypes, os, sys
    import torch
    import gpuprobe  # GPUPROBE: the session records (nvtx=off: its own NVTX loads no tool)
    pid = os.fork()
    if pid == 0:
        torch.cuda.nvtx.range_push("in the child")  # the process's first NVTX call: NVTX loads
        torch.cuda.nvtx.range_pop()                 # the library here, in the child
        try:
            library = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOLOAD)
        except OSError:
            os._exit(3)  # not loaded: nothing was checked
        os._exit(10 + library.gpuprobe_session_running())
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status))
""")


def test_library_first_loaded_in_a_fork_child_starts_no_session(tmp_path):
    """A fork()'s child of a Python process whose gpuprobe records makes the process's first NVTX
    call: NVTX loads libgpuprobe_nvtx.so there, which finds gpuprobe._core loaded and stands down
    (the parent's session does not record in the child; a session of the library's own would be
    threads, a control socket and a file the program never asked for)."""
    script = tmp_path / "fork.py"
    script.write_text(FORK_CHILD)
    done = subprocess.run(
        [sys.executable, str(script), str(LIBRARY)], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env=clean_env(NVTX_INJECTION64_PATH=str(LIBRARY),
                                              GPUPROBE=f"chrome={tmp_path / 't-%p.json'},nvtx=off"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "10", (done.stdout, done.stderr)  # loaded, no session
    assert len(list(tmp_path.glob("t-*.json"))) == 1  # the parent's
