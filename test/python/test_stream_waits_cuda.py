"""A stream's wait behind another stream's kernel, on a real GPU (issue 47): the report names the
kernel each waiting stream waited behind — the producer's GEMM, not the kernel on a third stream
released by the same event (a fellow waiter) — from gpuprobe's own CUPTI recording and from
torch.profiler's trace of the same program."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="skipped: torch is not installed")
pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="skipped: no CUDA device here (the GPU machine runs it: test/gpu/run.sh python)")
BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
ROUNDS = 30

# Everything launched ahead (no synchronization until the end): each round a GEMM on the producer
# stream and an event after it; two other streams wait for the event, then run a small kernel.
PROGRAM = textwrap.dedent(f"""
    import sys, torch
    def rounds():
        a = torch.randn(4096, 4096, device="cuda")
        b = torch.randn(4096, 4096, device="cuda")
        x = torch.randn(1 << 22, device="cuda")
        producer, first, second = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
        torch.cuda.synchronize()
        for _ in range({ROUNDS}):
            with torch.cuda.stream(producer):
                c = a @ b
                done = torch.cuda.Event()
                done.record(producer)
            for s, f in ((first, torch.mul), (second, torch.add)):
                s.wait_event(done)
                with torch.cuda.stream(s):
                    f(x, 2)
        torch.cuda.synchronize()
    rounds()  # warm: cuBLAS's handles and workspaces
    if sys.argv[1] == "gpuprobe":
        import gpuprobe
        with gpuprobe.Session("chrome=" + sys.argv[2] + ",cupti=kernel+runtime"):
            rounds()
    else:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            rounds()
        p.export_chrome_trace(sys.argv[2])
""")


RECORDERS = ["gpuprobe", "torch.profiler"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each recorder's report of the program: {recorder: (waiting streams, producer stream)}."""
    out = {}
    for recorder in RECORDERS:
        trace = tmp_path_factory.mktemp("waits") / "trace.json"
        subprocess.run([sys.executable, "-c", PROGRAM, recorder, str(trace)], check=True,
                       timeout=300)
        report = json.loads(subprocess.run(
            [str(BUILD / "gpuprobe"), "report", "--json", str(trace)], capture_output=True,
            text=True, check=True).stdout)
        streams = [s for s in report["gpu"]["streams"] if s["kernels"] >= ROUNDS]
        assert len(streams) == 3, report["gpu"]["streams"]
        producer = max(streams, key=lambda s: s["busy_ms"])  # the GEMMs
        out[recorder] = ([s for s in streams if s is not producer], producer)
    return out


@pytest.mark.parametrize("recorder", RECORDERS)
def test_waiting_streams_name_the_producer_kernel(reports, recorder):
    waiting, producer = reports[recorder]
    for s in waiting:
        assert s["waited_behind"], s
        top = s["waited_behind"][0]
        print(recorder, "stream", json.dumps(s))
        assert top["stream"] == producer["stream"], (top, producer)
        # The GEMM (cuBLAS's kernel, whatever its name), not a waiter's elementwise kernel.
        assert "elementwise" not in top["name"], top
        # None of the queued waits is put on the fellow waiter.
        assert all(w["stream"] != o["stream"] for w in s["waited_behind"] for o in waiting), s


@pytest.mark.xfail(strict=True, reason="known gap (H100, 2026-12-07): a waiter's kernel often "
                   "starts more than GpuIdle::kBehindSlackNs after the GEMM it waited for, "
                   "because the next GEMM, queued back to back, holds the SMs; 12-19 of 30 "
                   "waits are named, the rest are counted as unexplained")
@pytest.mark.parametrize("recorder", RECORDERS)
def test_every_wait_is_explained_by_the_producer(reports, recorder):
    waiting, _producer = reports[recorder]
    for s in waiting:
        top = s["waited_behind"][0]
        assert top["waits"] >= ROUNDS - 2, s
        assert top["wait_ms"] >= 0.9 * s["other_idle_ms"], s
