"""trigger=recompile>N/W (issue 44, part 4): a recompile storm in a real torch.compile program
(PyPI's torch on the CPU: each new input size recompiles, automatic dynamic shapes off) makes
the flight recorder write one dump, which holds the recompiles and the requests around them and
which `gpuprobe report` explains from the dump alone."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"

PROGRAM = textwrap.dedent("""
    import sys, time, torch, gpuprobe, gpuprobe.torch as gt
    torch._dynamo.config.automatic_dynamic_shapes = False  # each new size: a recompile
    out, trigger = sys.argv[1], sys.argv[2]
    f = torch.compile(lambda x: (x * 2).sin().sum())
    session = gpuprobe.Session(f"flight=60,dump={out},dump_after=8,trigger={trigger}")
    watcher = gt.watch_compile(cache_keys=False)
    for size in [4] * 20 + [5, 6, 7, 8, 9] + [9] * 20:
        with gpuprobe.range("request"):
            f(torch.ones(size))
    time.sleep(9.0)  # the dump's time after
    watcher.close()
    session.stop()
""")


def run(tmp_path, trigger):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    out = tmp_path / "dumps"
    result = subprocess.run([sys.executable, str(script), str(out), trigger], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return sorted(p for p in out.iterdir() if (p / "dump.json").exists()) if out.exists() else []


def test_a_recompile_storm_writes_one_dump_that_explains_it(tmp_path):
    dumps = run(tmp_path, "recompile>2/60s")
    assert len(dumps) == 1, dumps  # the third recompile fires it; the storm goes on above
    info = json.loads((dumps[0] / "dump.json").read_text())
    assert info["source"] == "trigger" and info["trigger"] == "recompile>2/60s"
    assert info["reason"].startswith("recompile 0/3: "), info["reason"]
    assert "(3 recompiles in the last 60 s, more than 2)" in info["reason"]
    assert info["values"]["recompiles"] == 3
    report = subprocess.run([str(CLI), "report", str(dumps[0])], check=True, capture_output=True,
                            text=True).stdout
    assert "recompile>2/60s" in report
    # The compiles and the recompiles' guards, and the requests before and after the trigger.
    assert "size mismatch" in report or "size" in report, report
    as_json = json.loads(subprocess.run([str(CLI), "report", str(dumps[0]), "--json"],
                                        check=True, capture_output=True, text=True).stdout)
    assert len(as_json["compile"]["recompiles"]) >= 3
    # The requests before the storm, and those around the compiles up to the third's, whose own
    # request (it waited for the compile) ended after the trigger.
    requests = [r for r in as_json["ranges"] if r["name"] == "request"]
    assert requests and requests[0]["calls"] >= 23
    compiles = as_json["compile"]["compiles"]
    assert compiles >= 4, compiles  # the first compile and three recompiles


def test_every_recompile_fires_within_the_cooldown(tmp_path):
    dumps = run(tmp_path, "recompile")
    # The first recompile fires; the others come within the default dump_cooldown.
    assert len(dumps) == 1, dumps
    info = json.loads((dumps[0] / "dump.json").read_text())
    assert info["trigger"] == "recompile" and info["reason"].startswith("recompile 0/1: ")
