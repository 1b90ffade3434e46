"""The extension keeps gpuprobe's symbols (and those of any library linked into it) to itself, so
that a library loaded beside it — torch, with its own copies of such code — never binds to
them, whichever is imported first."""
import pathlib
import shutil
import subprocess
import sys

import pytest

from gpuprobe import _core


def test_the_extension_exports_its_init_function_and_no_code_of_its_own():
    """And NVTX's tool entry point where gpuprobe was built with the NVTX3 headers (gpuprobe run
    names the extension in NVTX_INJECTION64_PATH), with gpuprobe_on_cuda_init and
    gpuprobe_session_running, through which the CUDA injection library hands CUDA's start to the
    extension's session and stands down."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("skipped: no nm (binutils) on this machine")
    out = subprocess.run([nm, "-D", "--defined-only", _core.__file__], check=True,
                         capture_output=True, text=True).stdout
    exported = [line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3]
    assert "PyInit__core" in exported
    assert ("InitializeInjectionNvtx2" in exported) == _core._nvtx_tool
    assert ("gpuprobe_on_cuda_init" in exported) == _core._nvtx_tool
    assert ("gpuprobe_session_running" in exported) == _core._nvtx_tool
    assert ("gpuprobe_bind_nvtx_tool" in exported) == _core._nvtx_tool
    entry_points = ("PyInit__core", "InitializeInjectionNvtx2", "gpuprobe_bind_nvtx_tool",
                    "gpuprobe_on_cuda_init", "gpuprobe_session_running")
    # Besides it, only what the C++ standard library's headers give default visibility to:
    # std templates instantiated here and their local statics (_ZSt, _ZNSt, _ZNKSt, _ZZNSt) and
    # type information (_ZT), which are the same in every module built against this libstdc++.
    own = [name for name in exported if name not in entry_points
           and not name.startswith(("_ZSt", "_ZNSt", "_ZNKSt", "_ZZNSt", "_ZGVZNSt", "_ZT"))]
    assert own == [], own
    demangled = subprocess.run([nm, "-DC", "--defined-only", _core.__file__], check=True,
                               capture_output=True, text=True).stdout
    demangled = "\n".join(line for line in demangled.splitlines()
                          if not line.endswith((" gpuprobe_on_cuda_init",
                                                " gpuprobe_session_running",
                                                " gpuprobe_bind_nvtx_tool")))
    for foreign in ("gpuprobe", "pybind11", "nlohmann", "deflate", "inflate"):
        assert foreign not in demangled, foreign


@pytest.mark.parametrize("first", ["gpuprobe", "torch"])
def test_torch_and_gpuprobe_work_in_either_import_order(tmp_path, first):
    pytest.importorskip("torch")
    second = "torch" if first == "gpuprobe" else "gpuprobe"
    trace = tmp_path / "t.json"
    code = (f"import {first}, {second}\n"
            f"with gpuprobe.Session('chrome={trace}'):\n"
            "    with gpuprobe.range('matmul'):\n"
            "        x = torch.ones(64, 64) @ torch.ones(64, 64)\n"
            "assert float(x[0, 0]) == 64.0\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert '"matmul"' in pathlib.Path(trace).read_text()
