"""The README's worked example, run as a user would (examples/compile/recompile_storm.py): shape
drift sets off a recompile storm, and `gpuprobe report` names it — compile-bound, size guards,
the FX graph cache's changed input shape per miss, the recompile limit and the eager fallback,
and each slow request's compile with the guard that failed."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"


def test_the_storm_and_its_evidence(tmp_path):
    trace = tmp_path / "storm.pftrace"
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    out = subprocess.run([sys.executable, str(ROOT / "examples/compile/recompile_storm.py"),
                          str(trace)], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "9 compiles, 8 recompiles" in out.stdout
    report = [str(CLI), "report", str(trace), "--latency", "request", "--threshold-ms", "50"]
    text = subprocess.run(report, check=True, capture_output=True, text=True).stdout
    data = json.loads(subprocess.run(report + ["--json"], check=True, capture_output=True,
                                     text=True).stdout)
    # The verdict leads with the slow requests' cause (issue 40: whatever the device), then the
    # storm: compile-bound, as before.
    assert data["verdict"].startswith('latency outliers: 8 of 40 "request" ranges over 50.000 ms')
    assert "% of it in compiles; compile-bound: torch.compile compiled for" in data["verdict"]
    assert "8 recompiles, 8 of them size guards: the input shapes drift" in data["verdict"]
    assert "the recompile limit was hit 1 time" in data["verdict"]
    compile = data["compile"]
    assert compile["compiles"] == 9 and len(compile["recompiles"]) == 8
    assert len(compile["eager_fallbacks"]) == 1 and "recompile limit" in compile["eager_fallbacks"][0]
    # Each FX graph cache miss names the input whose shape changed, batch size by batch size.
    for n in range(8, 15):
        assert (f"float32 ({n},64) stride (64,1) -> float32 ({n + 1},64) stride (64,1)"
                in text), n
    # The slow requests: their compile, and the guard that made it.
    outliers = data["jitter"]["outliers"]
    assert len(outliers) == 8
    details = [c["detail"] for o in outliers for c in o["causes"] if c["cause"] == "compile"]
    assert "torch.compile 0/0, the frame's first compile" in details
    assert any("a recompile: 0/0: tensor 'args[0]' size mismatch at index 0. expected 8, "
               "actual 9" in d for d in details), details
