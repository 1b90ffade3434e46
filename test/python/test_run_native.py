"""`gpuprobe run` on programs built without gpuprobe, through the injection library the runner
names in CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH (libgpuprobe_nvtx.so, installed beside
the package): a native NVTX program's ranges (CPU), one session per Python process whatever is
loaded, CUPTI only in processes that initialize CUDA, and on a GPU a plain CUDA program's
kernels and copies attributed to its NVTX ranges, a PyTorch script's kernels attributed to its
steps and modules, and a fork child that uses CUDA under a parent that never did."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from gpuprobe import run as runner

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")).resolve()
CLI = BUILD / "gpuprobe"
NVTX_PROGRAM = BUILD / "test" / "nvtx_program"
CUDA_PROGRAM = BUILD / "test" / "gpu" / "plain_cuda_program"
TIMEOUT = 300


def has_cuda_device():
    return any(pathlib.Path("/dev").glob("nvidia[0-9]*"))


def env_without_gpuprobe(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUPROBE") and not k.endswith("_INJECTION64_PATH")}
    env["GPUPROBE_CLI"] = str(CLI)
    env.update(extra)
    return env


def gpuprobe_run(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "gpuprobe", "run", *map(str, args)], cwd=cwd,
                          env=env or env_without_gpuprobe(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def trace(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_the_injection_library_is_installed_beside_the_package():
    library = runner.injection_library({})
    assert library is not None, (
        f"no {runner.INJECTION_LIBRARY} under {runner.PACKAGE_PARENT}/lib: `pip install .` "
        "installs it there (built with the NVTX3 headers)")
    env = runner.child_environment({}, "chrome=t.json", library)
    assert env["CUDA_INJECTION64_PATH"] == library == env["NVTX_INJECTION64_PATH"]
    # Another tool named there (Nsight Systems) keeps its variable.
    env = runner.child_environment({"CUDA_INJECTION64_PATH": "/opt/nsys/libinj.so"}, "x", library)
    assert env["CUDA_INJECTION64_PATH"] == "/opt/nsys/libinj.so"
    assert env["NVTX_INJECTION64_PATH"] == library


def test_config_adds_cupti_at_cuda_init_unless_the_user_says():
    assert runner.config_string("t.json") == "chrome=t.json,cupti=all,cupti_start=cuda"
    assert runner.config_string("t.json", "cupti=kernel") == (
        "chrome=t.json,cupti_start=cuda,cupti=kernel")
    assert runner.config_string("t.json", "cupti_start=session,cupti=all") == (
        "chrome=t.json,cupti_start=session,cupti=all")
    assert runner.config_string("t.json", None, cupti=False) == "chrome=t.json"


@pytest.mark.skipif(not NVTX_PROGRAM.exists(), reason=f"no {NVTX_PROGRAM} (NVTX3 headers)")
def test_native_program_nvtx_ranges(tmp_path):
    result = gpuprobe_run("-o", "native.json", "--", NVTX_PROGRAM, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = trace(tmp_path / "native.json")
    names = {e.get("name") for e in data["traceEvents"] if e.get("ph") == "X"}
    assert {"outer", "inner"} <= names, sorted(n for n in names if n)
    assert "gpuprobe: wrote native.json" in result.stderr
    # No CUDA here: CUPTI waited for CUDA's initialization, which never came; nothing was said.
    assert "CUPTI" not in result.stderr, result.stderr


PYTHON_NVTX = textwrap.dedent("""
    import os
    import torch
    import torch.cuda.nvtx as nvtx
    with nvtx.range("python nvtx"):
        torch.ones(8).sum()
    maps = open("/proc/self/maps").read()
    print("second copy loaded:", "libgpuprobe_nvtx" in maps)
""")


def test_a_python_process_records_once_in_its_own_session(tmp_path):
    script = tmp_path / "p.py"
    script.write_text(PYTHON_NVTX)
    result = gpuprobe_run("--", sys.executable, script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # _core's session records. The runner's library is loaded too (NVTX loads it, at the
    # session's start) and stands down, handing NVTX to _core: one file, with the ranges.
    assert "second copy loaded: True" in result.stdout
    written = list(tmp_path.glob("gpuprobe-*.json"))
    assert len(written) == 1, written
    data = trace(written[0])
    assert "python nvtx" in {e.get("name") for e in data["traceEvents"]}
    if not has_cuda_device():  # where there is one, torch's import may initialize CUDA
        assert data["gpuprobe"]["gpu"]["status"] == (
            "cupti_start=cuda: the process never initialized CUDA")


needs_gpu = pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device (/dev/nvidia*)")


@needs_gpu
def test_plain_cuda_program_runs_unharmed_with_its_nvtx_ranges(tmp_path):
    # On an H100 (CUDA 13, run 90) a program not linked with gpuprobe whose injected gpuprobe
    # started CUPTI crashed at exit (139), or saw no device when CUPTI started eagerly inside
    # cuInit: the injected library records no GPU activity until that is understood, and says so.
    if not CUDA_PROGRAM.exists():
        pytest.fail(f"no {CUDA_PROGRAM}: build the plain_cuda_program target (nvcc, NVTX3)")
    result = gpuprobe_run("-o", "cuda.json", "--", CUDA_PROGRAM, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "value 3325.26" in result.stdout
    assert "CUPTI is not started in a program not linked with gpuprobe" in result.stderr
    events = trace(tmp_path / "cuda.json")["traceEvents"]
    assert len([e for e in events if e.get("name") == "plain step"]) == 5
    assert not [e for e in events if e.get("cat") == "kernel"]


TORCH_CUDA = textwrap.dedent("""
    import os
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(6):
        opt.zero_grad()
        model(torch.randn(32, 64, device="cuda")).sum().backward()
        opt.step()
    torch.cuda.synchronize()
    print("weights", float(sum(p.double().sum() for p in model.parameters())))
""")

FORK_CHILD_USES_CUDA = textwrap.dedent("""
    import os
    import torch  # the parent never initializes CUDA
    pid = os.fork()
    if pid == 0:
        x = torch.ones(1024, device="cuda") * 2
        torch.cuda.synchronize()
        os._exit(0 if float(x.sum()) == 2048.0 else 1)
    _, status = os.waitpid(pid, 0)
    print("child status", os.waitstatus_to_exitcode(status))
""")


@needs_gpu
def test_pytorch_kernels_attributed_to_modules(tmp_path):
    script = tmp_path / "t.py"
    script.write_text(TORCH_CUDA)
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           env=env_without_gpuprobe(), timeout=TIMEOUT)
    result = gpuprobe_run("-o", "torch.json", "--", sys.executable, script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == plain.stdout  # what the program computes is unchanged
    events = trace(tmp_path / "torch.json")["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert len(kernels) >= 30, len(kernels)
    ranges = {k["args"].get("range") for k in kernels}
    assert any(r and r.startswith("Sequential") for r in ranges), ranges


@needs_gpu
def test_a_fork_child_may_use_cuda_the_parent_never_initialized(tmp_path):
    script = tmp_path / "f.py"
    script.write_text(FORK_CHILD_USES_CUDA)
    result = gpuprobe_run("--", sys.executable, script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "child status 0" in result.stdout, result.stdout + result.stderr


ENV_TRACED = BUILD / "examples" / "env_traced"


@pytest.mark.skipif(not ENV_TRACED.exists(), reason=f"no {ENV_TRACED} (examples not built)")
def test_a_program_linked_with_gpuprobe_records_in_its_own_session(tmp_path):
    # Its session starts first; the runner's library, loaded by NVTX when that session binds
    # gpuprobe's own NVTX export, stands down: one file, with the program's ranges.
    result = gpuprobe_run("--", ENV_TRACED, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = list(tmp_path.glob("gpuprobe-*.json"))
    assert len(written) == 1, (written, result.stderr)
    ranges = [e for e in trace(written[0])["traceEvents"] if e.get("ph") == "X"]
    assert ranges, result.stderr


REEXEC = textwrap.dedent("""
    import os, sys
    if len(sys.argv) == 1:
        os.execv(sys.executable, [sys.executable, __file__, "again"])
    import torch
    torch.nn.Linear(2, 2)(torch.ones(2))
    print("after exec", os.getpid())
""")


def test_a_program_that_execs_itself_is_traced_after_the_exec(tmp_path):
    # The new image holds no copy of gpuprobe yet, whatever its environment says: it records.
    script = tmp_path / "reexec.py"
    script.write_text(REEXEC)
    result = gpuprobe_run("--", sys.executable, script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pid = result.stdout.split()[-1]
    data = trace(tmp_path / f"gpuprobe-{pid}.json")
    assert "Linear" in {e.get("name") for e in data["traceEvents"]}, result.stderr
