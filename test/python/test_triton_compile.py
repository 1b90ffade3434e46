"""gpuprobe.triton.watch_compile() with Triton from PyPI (torch's dependency), on the CPU: Triton
compiles a kernel for an H100-class target (sm_90) without a GPU, which runs its whole pipeline
and its compilation listener. The first process compiles — the range, its stages and its time
agree with the program's own clock around `triton.compile` — and a second process with the same
cache directory loads the kernel instead; the report and the metrics count both, apart from
torch.compile's; a listener that was there before is still called and comes back on close."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("triton", reason="skipped: Triton is not installed (pip install triton)")

from trace_util import load_events  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"

CHILD = textwrap.dedent("""
    import json, sys, time
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource
    import gpuprobe, gpuprobe.triton as gtr

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    seen = []
    triton.knobs.compilation.listener = lambda **kw: seen.append(kw["cache_hit"])
    before = triton.knobs.compilation.listener
    src = ASTSource(fn=add_kernel, constexprs={"BLOCK": 256},
                    signature={"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"})
    with gpuprobe.Session(f"chrome={sys.argv[1]},metrics_file={sys.argv[2]}"):
        watcher = gtr.watch_compile()
        begin = time.perf_counter()
        triton.compile(src, target=GPUTarget("cuda", 90, 32))
        wall = time.perf_counter() - begin
        report = watcher.report()
        watcher.close()
    print(json.dumps({"compiles": report.compiles, "stages": report.stage_seconds,
                      "hits": report.cache_hits, "misses": report.cache_misses, "wall": wall,
                      "previous_called": seen, "restored": triton.knobs.compilation.listener is before,
                      "unavailable": watcher.unavailable}))
""")


def run_child(tmp_path, i):
    trace, metrics = tmp_path / f"run{i}.json", tmp_path / f"run{i}.prom"
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_DEFAULT_FP_FUSION="1")
    child = tmp_path / "child.py"  # Triton reads a kernel's source from its file
    child.write_text(CHILD)
    out = subprocess.run([sys.executable, str(child), str(trace), str(metrics)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    report = json.loads(subprocess.run([str(CLI), "report", "--json", str(trace)], check=True,
                                       capture_output=True, text=True).stdout)
    return result, load_events(trace), report["compile"], metrics.read_text()


def test_a_compile_then_a_load_from_the_cache_in_another_process(tmp_path):
    first, events, compile_, metrics = run_child(tmp_path, 0)
    assert first["unavailable"] == []
    (c,) = first["compiles"]
    assert c["kernel"] == "add_kernel" and c["cache_hit"] is False
    # Triton's own measure of its compile against the program's clock around triton.compile.
    assert c["seconds"] == pytest.approx(first["wall"], rel=0.2), (c["seconds"], first["wall"])
    assert list(c["stages"]) == ["ir", "ttir", "ttgir", "llir", "ptx", "cubin", "store"]
    assert sum(c["stages"].values()) == pytest.approx(c["seconds"], rel=1e-6)
    (span,) = [e for e in events if e.get("name") == "triton compile: add_kernel"]
    assert span["cat"] == "compile" and span["dur"] == pytest.approx(c["seconds"] * 1e6, rel=0.01)
    assert first["previous_called"] == [False] and first["restored"] is True
    # The report: Triton's compile, apart from torch.compile's; its stages from the counters.
    assert compile_["compiles"] == 0
    triton = compile_["triton"]
    assert (triton["compiles"], triton["cache_loads"]) == (1, 0)
    assert triton["compile_seconds"] == pytest.approx(c["seconds"], rel=0.01)
    assert triton["stage_seconds"] == pytest.approx(first["stages"])
    lines = metrics.splitlines()
    assert 'gpuprobe_triton_compile_duration_seconds_count{outcome="compile"} 1' in lines
    assert 'gpuprobe_triton_compile_duration_seconds_count{outcome="cache load"} 0' in lines
    if shutil.which("promtool") is not None:
        check = subprocess.run(["promtool", "check", "metrics"], input=metrics,
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr

    second, events, compile_, metrics = run_child(tmp_path, 1)
    (c,) = second["compiles"]
    assert c["cache_hit"] is True and (second["hits"], second["misses"]) == (1, 0)
    assert [e["name"] for e in events if e.get("name", "").startswith("triton ")] == [
        "triton cache load: add_kernel"]
    assert (compile_["triton"]["compiles"], compile_["triton"]["cache_loads"]) == (0, 1)
    assert 'gpuprobe_triton_compile_duration_seconds_count{outcome="cache load"} 1' in \
        metrics.splitlines()
