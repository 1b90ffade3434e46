"""A TORCH_TRACE log recorded without gpuprobe.torch, joined to a trace by time
(gpuprobe.torch.torch_trace), gives the report the compile section that watch_compile() gives in
process. One run records both ways — TORCH_TRACE, and a gpuprobe session with the watcher — with
shape drift, a dtype change, a graph break traced by every compile of the frame, and cache hits
after `torch._dynamo.reset()`. The trace less everything the watcher wrote is what a user
without it has; that trace joined to the log must report what the watcher's trace reports:
the compiles and their time, the recompiles with their guards, the restarts, the graph breaks
with their line of user code, each cache layer's outcome with the key components that changed,
the phases and the generated code. The workload: compile_workload.py."""
import json
import os
import pathlib
import subprocess

import pytest

pytest.importorskip("torch")

from compile_workload import record_both  # noqa: E402
from gpuprobe.torch import torch_trace  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"

def compile_section(path):
    out = subprocess.run([str(CLI), "report", str(path), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["compile"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("torch_trace")
    watched, _ = record_both(tmp)
    # What a program without watch_compile() records: its own ranges, none of the watcher's.
    data = json.loads(watched.read_text())
    data["traceEvents"] = [
        e for e in data["traceEvents"]
        if e.get("cat") != "compile" and not str(e.get("name", "")).startswith(
            ("compiled graph", "eager after graph break"))]
    assert any(e.get("name") == "request" for e in data["traceEvents"])
    bare = tmp / "bare.json"
    bare.write_text(json.dumps(data))
    # The join converts with the gpuprobe command: this build's, wherever the package went.
    before = os.environ.get("GPUPROBE_CLI")
    os.environ["GPUPROBE_CLI"] = str(CLI)
    try:
        yield tmp, watched, bare
    finally:
        if before is None:
            del os.environ["GPUPROBE_CLI"]
        else:
            os.environ["GPUPROBE_CLI"] = before


def test_the_joined_log_reports_what_the_watcher_reports(run, capsys):
    tmp, watched, bare = run
    joined = tmp / "joined.json"
    assert torch_trace.main([str(tmp / "torch_trace"), "--join", str(bare), "-o",
                             str(joined)]) == 0
    assert "within the trace's span" not in capsys.readouterr().err
    want, got = compile_section(watched), compile_section(joined)
    assert compile_section(bare)["compiles"] == 0
    assert got["compiles"] == want["compiles"] >= 6
    assert got["compile_ms"] == pytest.approx(want["compile_ms"], abs=0.5)
    assert sorted(got["recompiles"]) == sorted(want["recompiles"])
    assert any("size mismatch at index 0. expected 8, actual 16" in r for r in got["recompiles"])
    assert sorted(got["restarts"]) == sorted(want["restarts"])
    assert got["graph_breaks"] == want["graph_breaks"]
    assert all("[in body (" in reason for reason in got["graph_breaks"])
    assert got["cache_layers"] == want["cache_layers"]
    assert sorted(got["cache_misses_explained"]) == sorted(want["cache_misses_explained"])
    assert any("example_inputs[0] float32 (8,4)" in m and "(16,4)" in m
               for m in got["cache_misses_explained"])
    assert got["cache_hits"] == want["cache_hits"] and got["cache_misses"] == want["cache_misses"]
    assert got["graph_ops"] == want["graph_ops"]
    assert got["phase_seconds"].keys() == want["phase_seconds"].keys()
    for group, seconds in want["phase_seconds"].items():
        assert got["phase_seconds"][group] == pytest.approx(seconds, abs=1e-3)
    assert [(m["compile_id"], m["kernels"]) for m in got["generated_code"]] == \
        [(m["compile_id"], m["kernels"]) for m in want["generated_code"]]


def test_the_compile_events_sit_at_their_time_among_the_programs_ranges(run):
    tmp, watched, bare = run
    joined = tmp / "joined_times.json"
    torch_trace.join(bare, tmp / "torch_trace", joined, cli=str(CLI))

    def starts(path, prefix):
        return sorted(e["ts"] for e in json.loads(path.read_text())["traceEvents"]
                      if str(e.get("name", "")).startswith(prefix) and e.get("ph") == "X")

    # The compile ranges come from Dynamo's wall-clock spans both ways: the same times, to the
    # in-process session's conversion of wall-clock times to its clock (a few microseconds).
    assert starts(joined, "torch.compile ") == pytest.approx(starts(watched, "torch.compile "),
                                                             abs=50)
    # The first request holds the first compile.
    request = min(starts(joined, "request"))
    assert request <= starts(joined, "torch.compile ")[0]


def test_python_report_takes_the_log(run):
    import gpuprobe

    tmp, watched, bare = run
    report = gpuprobe.report(bare, torch_trace=tmp / "torch_trace")
    assert report["compile"]["compiles"] == compile_section(watched)["compiles"]


def test_a_log_of_another_run_is_said(run, tmp_path, capsys):
    tmp, watched, bare = run
    data = json.loads(bare.read_text())
    data["baseTimeNanoseconds"] = int(data.get("baseTimeNanoseconds", 0)) + 24 * 3600 * 10**9
    later = tmp_path / "later.json"
    later.write_text(json.dumps(data))
    assert torch_trace.main([str(tmp / "torch_trace"), "--join", str(later), "-o",
                             str(tmp_path / "j.json")]) == 0
    assert "none of the" in capsys.readouterr().err


def test_a_missing_or_damaged_log_is_one_clear_error(run, tmp_path, capsys):
    tmp, watched, bare = run
    assert torch_trace.main([str(tmp_path / "nothing"), "--join", str(bare), "-o",
                             str(tmp_path / "j.json")]) == 1
    assert "no such TORCH_TRACE log" in capsys.readouterr().err
    damaged = tmp_path / "damaged.log"
    (log,) = (tmp / "torch_trace").glob("*.log")
    text = log.read_text()
    damaged.write_text(text[: len(text) // 2] + "\x00garbage]\n{not json\n" + text[-2000:])
    assert torch_trace.main([str(damaged), "--join", str(bare), "-o",
                             str(tmp_path / "j.json")]) == 0
    assert "damaged records skipped" in capsys.readouterr().out
    # A report of what the damage left: some of the compiles, no more than there were.
    section = compile_section(tmp_path / "j.json")
    assert 0 < section["compiles"] <= compile_section(watched)["compiles"]
