"""`gpuprobe capture PID` on an unmodified PyTorch training script running under `gpuprobe run`
(the issue's "a long-running script is captured twice", the second time by `python -m gpuprobe
capture`): each window is its own trace holding the
steps and module ranges of that window only, the program goes on undisturbed and writes its own
trace at the end; a PID without gpuprobe is one clear line and a non-zero exit."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")).resolve()
CLI = BUILD / "gpuprobe"
pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"no {CLI} (build the gpuprobe CLI)")

TRAIN = textwrap.dedent("""
    import os, pathlib, sys, time
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    stop = pathlib.Path(sys.argv[1])
    pathlib.Path(sys.argv[2]).write_text(str(os.getpid()))
    steps = 0
    while not stop.exists() and steps < 200000:
        opt.zero_grad()
        model(torch.randn(16, 32)).sum().backward()
        opt.step()
        steps += 1
        time.sleep(0.002)
    print("steps", steps)
""")


def wait_for(path, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.1)
    raise AssertionError(f"{path} never written")


def capture(pid, out, cwd, env, module=False):
    """`gpuprobe capture`, or with ``module`` `python -m gpuprobe capture` (the same command)."""
    command = [sys.executable, "-m", "gpuprobe"] if module else [str(CLI)]
    return subprocess.run(command + ["capture", str(pid), "--seconds", "1", "-o", str(out)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_training_script_under_gpuprobe_run_is_captured_twice(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    stop, pid_file = tmp_path / "stop", tmp_path / "pid"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROBE")}
    env["GPUPROBE_CLI"] = str(CLI)
    env["GPUPROBE_CONTROL_DIR"] = str(tmp_path / "control")  # the test's own socket directory
    os.makedirs(tmp_path / "control", mode=0o700)
    runner = subprocess.Popen([sys.executable, "-m", "gpuprobe", "run", "-o", "run.json", "--",
                               sys.executable, script, stop, pid_file], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = int(wait_for(pid_file))
        windows = []
        for i in range(2):
            result = capture(pid, tmp_path / f"window{i}.json", tmp_path, env, module=i == 1)
            assert result.returncode == 0, result.stderr
            assert str(tmp_path / f"window{i}.json") in result.stdout, result.stdout
            windows.append(tmp_path / f"window{i}.json")
    finally:
        stop.write_text("stop")
        out, err = runner.communicate(timeout=300)
    assert runner.returncode == 0, err
    assert out.startswith("steps ")
    spans = []
    for window in windows:
        with open(window, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        steps = [e for e in events if e.get("name", "").startswith("ProfilerStep#")]
        modules = [e for e in events if e.get("name") == "Sequential"]
        assert steps and modules, (window, sorted({e.get("name") for e in events})[:20])
        spans.append((min(e["ts"] for e in steps), max(e["ts"] for e in steps)))
    assert spans[0][1] < spans[1][0], spans  # two windows, one after the other
    with open(tmp_path / "run.json", encoding="utf-8") as f:
        whole = json.load(f)["traceEvents"]
    assert len([e for e in whole if e.get("name", "").startswith("ProfilerStep#")]) > 20


def test_capture_of_a_process_without_gpuprobe_is_one_line(tmp_path):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        env = dict(os.environ, GPUPROBE_CONTROL_DIR=str(tmp_path))
        result = subprocess.run([str(CLI), "capture", str(sleeper.pid), "--seconds", "1"],
                                capture_output=True, text=True, timeout=60, env=env)
    finally:
        sleeper.kill()
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "no gpuprobe control socket" in result.stderr
