"""gpuprobe's compile telemetry against tlparse, the tool torch.compile users read PyTorch's
structured trace with (its PyPI wheel carries the binary). One run records with TORCH_TRACE and
with gpuprobe together — shape drift, a dtype change, a graph break traced by every compile of the
frame, and FX graph / AOTAutograd cache hits after `torch._dynamo.reset()` — and tlparse's
`compile_directory.json` of that log must agree with `gpuprobe report --json` on the compile ids,
the recompile reasons, the cache hits and misses per layer, and the graph breaks with the line of
user code that caused them."""
import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from compile_workload import record_both  # noqa: E402

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
TLPARSE = shutil.which("tlparse") or shutil.which("tlparse", path=str(pathlib.Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(TLPARSE is None, reason="skipped: tlparse is not installed (pip install tlparse)")

@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tlparse")
    trace, _ = record_both(tmp)
    (log,) = (tmp / "torch_trace").glob("*.log")
    subprocess.run([TLPARSE, str(log), "-o", str(tmp / "tl"), "--no-browser", "--overwrite"],
                   check=True, capture_output=True, text=True)
    directory = json.loads((tmp / "tl" / "compile_directory.json").read_text())
    report = json.loads(subprocess.run([str(BUILD / "gpuprobe"), "report", "--json", str(trace)],
                                       check=True, capture_output=True, text=True).stdout)
    return directory, report["compile"], tmp / "tl"


def artifacts(directory, pattern):
    """tlparse's artifacts whose name matches `pattern`: (compile id, its file) each."""
    out = []
    for cid, entry in directory.items():
        for a in entry["artifacts"]:
            if re.match(pattern, a["name"]):
                out.append((cid.strip("[]"), a["url"]))
    return out


def frame_compile(cid):
    """'0/1' of tlparse's '0/1_1' (a restarted compile's second attempt)."""
    return cid.split("_")[0]


def test_compile_ids(both):
    directory, compile, _ = both
    # tlparse: one compilation_metrics per finished frame compile (the attempt that succeeded).
    ids = collections.Counter(frame_compile(c) for c, _ in
                              artifacts(directory, r"compilation_metrics_\d+"))
    assert ids == {"0/0": 2, "0/1": 1, "0/2": 1, "1/0": 2, "1/1": 1, "1/2": 1}
    assert compile["compiles"] == sum(ids.values()) == 8


def test_recompile_reasons(both):
    directory, compile, tl = both
    theirs = {}
    for cid, url in artifacts(directory, r"recompile_reasons_\d+\.json"):
        text = (tl / url).read_text()
        # A list when several guards failed; one reason is written as its text.
        theirs[cid] = json.loads(text) if text.lstrip().startswith("[") else [text.strip()]
    ours = dict(r.split(": ", 1) for r in compile["recompiles"])
    assert set(ours) == set(theirs) == {"0/1", "0/2", "1/1", "1/2"}
    for cid, reason in ours.items():
        assert reason in theirs[cid], (cid, reason, theirs[cid])
    assert "size mismatch at index 0. expected 8, actual 16" in ours["0/1"]
    assert "dtype mismatch. expected Float, actual Double" in ours["0/2"]


def test_cache_hits_and_misses_per_layer(both):
    directory, compile, _ = both
    for layer, prefix in (("FX graph", "fx_graph_cache"), ("AOTAutograd", "aotautograd_cache")):
        counts = {outcome: len(artifacts(directory, rf"{prefix}_{outcome}_\d+"))
                  for outcome in ("hit", "miss", "bypass")}
        assert counts == {"hit": 2, "miss": 6, "bypass": 0}, layer
        ours = compile["cache_layers"][layer]
        assert (ours["hits"], ours["misses"], ours["bypasses"]) == (
            counts["hit"], counts["miss"], counts["bypass"]), layer
    # Per compile: the same compiles hit.
    hits = sorted(c for c, _ in artifacts(directory, r"fx_graph_cache_hit_\d+"))
    assert [frame_compile(c) for c in hits] == ["0/0", "1/0"]


def test_graph_breaks(both):
    directory, compile, tl = both
    theirs = artifacts(directory, r"dynamo_graph_break_reason_\d+\.txt")
    assert len(theirs) == sum(compile["graph_breaks"].values()) == 4
    (reason,) = compile["graph_breaks"]
    cause = reason.split(" [in ")[0].split(": ")[0]  # "Failed to trace builtin operator"
    for _, url in theirs:
        text = (tl / url).read_text()
        assert cause in text
        # The same line of user code: tlparse's "Graph break in user code at FILE:LINE".
        at = re.match(r"Graph break in user code at (.+):(\d+)", text)
        assert reason.endswith(f" [in body ({at.group(1)}:{at.group(2)})]"), (reason, at.group(0))
    assert "`print`" in reason


def test_restarts(both):
    directory, compile, _ = both
    # tlparse: a compile id with an attempt ("0/0_1") is a restarted analysis.
    restarted = {frame_compile(c.strip("[]")) for c in directory if "_" in c}
    ours = [r.split(": ", 1)[0] for r in compile["restarts"]]
    assert set(ours) == restarted == {"0/0", "0/1", "0/2"}
    assert len(ours) == 4  # 0/0 twice: the frame compiled again after torch._dynamo.reset()
    assert all("Failed to trace builtin operator" in r for r in compile["restarts"])

