"""`gpuprobe report`/`convert` read MLIR's pass timing report from Debian's mlir-opt-19 (package
mlir-19-tools): `-mlir-timing` text and `-mlir-output-format=json`, each pass a range of the wall
time MLIR printed, nested as its pipeline nests them."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
MLIR_OPT = shutil.which("mlir-opt-19") or shutil.which("mlir-opt")
pytestmark = pytest.mark.skipif(
    MLIR_OPT is None, reason="skipped: mlir-opt is not installed (apt install mlir-19-tools)")

PIPELINE = ("builtin.module(func.func(canonicalize,cse,loop-invariant-code-motion),"
            "canonicalize,symbol-dce)")


def module(functions=300):
    body = []
    for i in range(functions):
        body.append(f"""func.func @f{i}(%a: f32, %b: f32) -> f32 {{
  %c0 = arith.constant 0.0 : f32
  %x = arith.addf %a, %c0 : f32
  %y = arith.mulf %x, %b : f32
  %z = arith.mulf %x, %b : f32
  %w = arith.addf %y, %z : f32
  return %w : f32
}}""")
    return "\n".join(body) + "\n"


def timing(tmp_path, *flags):
    source = tmp_path / "input.mlir"
    source.write_text(module())
    out = tmp_path / ("timing.json" if flags else "timing.txt")
    done = subprocess.run([MLIR_OPT, f"--pass-pipeline={PIPELINE}", "-mlir-timing", *flags,
                           str(source), "-o", os.devnull], capture_output=True, text=True,
                          check=True)
    out.write_text(done.stderr)  # MLIR prints its report on stderr
    return out


def cli(*args):
    return subprocess.run([str(BUILD / "gpuprobe"), *map(str, args)], check=True,
                          capture_output=True, text=True).stdout


def rows(text):
    """(depth, name, wall seconds) per row of the tree display, as the report prints them."""
    header = next(line for line in text.splitlines() if "----Name----" in line)
    column = header.index("----Name----")
    out = []
    for line in text.splitlines()[text.splitlines().index(header) + 1:]:
        if not line.strip():
            continue
        figures = re.findall(r"([\d.]+) \(\s*[\d.]+%\)", line[:column])
        name = line[column:].rstrip()
        out.append(((len(name) - len(name.lstrip())) // 2, name.strip(), float(figures[-1])))
    return out


def ranges(trace, tmp_path):
    chrome = tmp_path / "converted.json"
    cli("convert", trace, chrome)
    return [e for e in json.loads(chrome.read_text())["traceEvents"] if e.get("ph") == "X"]


def test_text_report_reads_as_nested_pass_ranges(tmp_path):
    trace = timing(tmp_path)
    assert "format       MLIR pass timing report" in cli("info", trace)
    expected = [r for r in rows(trace.read_text()) if r[1] != "Total"]
    assert {"Canonicalizer", "CSE", "LoopInvariantCodeMotion", "SymbolDCE"} <= {
        name for _, name, _ in expected}
    events = sorted(ranges(trace, tmp_path), key=lambda e: (e["ts"], -e["dur"]))
    total, passes = events[0], events[1:]
    assert total["name"] == "MLIR pass pipeline (total)"
    # Each pass lasting what MLIR printed (its 0.1 ms rounding; a parent at least as long as
    # its children), inside the total.
    assert sorted(e["name"] for e in passes) == sorted(name for _, name, _ in expected)
    for name in {n for _, n, _ in expected}:
        got = sorted(e["dur"] for e in passes if e["name"] == name)
        want = sorted(seconds * 1e6 for _, n, seconds in expected if n == name)
        assert all(g >= w - 0.5 for g, w in zip(got, want)), (name, got, want)
    for e in passes:
        assert e["ts"] >= total["ts"] and e["ts"] + e["dur"] <= total["ts"] + total["dur"] + 0.5
    # Nested as MLIR nests them: the function pipeline holds its passes.
    pipeline = next(e for e in passes if e["name"] == "'func.func' Pipeline")
    inside = {e["name"] for e in passes if e is not pipeline and pipeline["ts"] <= e["ts"] and
              e["ts"] + e["dur"] <= pipeline["ts"] + pipeline["dur"] and e["dur"] > 0}
    assert {"CSE", "LoopInvariantCodeMotion"} <= inside
    report = json.loads(cli("report", "--json", trace))
    calls = {r["name"]: r["calls"] for r in report["ranges"]}
    assert calls["Canonicalizer"] == sum(1 for _, n, _ in expected if n == "Canonicalizer")
    assert report["compile"]["compiles"] == 0  # MLIR passes are not torch.compile's compiles


def test_json_report_gives_the_same_passes(tmp_path):
    text_names = sorted(e["name"] for e in ranges(timing(tmp_path), tmp_path))
    (tmp_path / "json").mkdir()
    trace = timing(tmp_path / "json", "-mlir-output-format=json")
    assert trace.read_text().lstrip().startswith("[")
    assert sorted(e["name"] for e in ranges(trace, tmp_path / "json")) == text_names
