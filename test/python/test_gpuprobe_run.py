"""`gpuprobe run` (python -m gpuprobe run, and the C++ command) on programs never written for
gpuprobe: an unmodified torchvision training script gets steps, module ranges and GC pauses, and
computes exactly what it computes without gpuprobe; exit statuses pass through; a missing program
is 127; a bad config starts nothing; the program's own sitecustomize still runs."""
import os
import pathlib
import re
import subprocess
import sys
import textwrap

from trace_util import load_events

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")).resolve()  # the tests run in tmp dirs
CLI = BUILD / "gpuprobe"
TIMEOUT = 300

TRAIN = textwrap.dedent("""
    import hashlib
    import torch
    import torchvision
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    model = torchvision.models.resnet18(num_classes=10)
    data = TensorDataset(torch.randn(12, 3, 32, 32), torch.randint(0, 10, (12,)))
    loader = DataLoader(data, batch_size=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.10f}")
    digest = hashlib.sha256()
    for p in model.state_dict().values():
        digest.update(p.detach().numpy().tobytes())
    print("weights", digest.hexdigest())
""")


def env_without_gpuprobe():
    """The environment a user's program runs in: GPUPROBE unset, PYTHONPATH as the test's (so
    that the child finds torch; gpuprobe there too, but the script never imports it)."""
    env = dict(os.environ)
    env.pop("GPUPROBE", None)
    env.setdefault("GPUPROBE_CLI", str(CLI))  # the summary's `gpuprobe info` and `report`
    return env


def python_run(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "gpuprobe", "run", *map(str, args)], cwd=cwd,
                          env=env or env_without_gpuprobe(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def cli_run(*args, cwd, env=None):
    env = env or env_without_gpuprobe()
    env["GPUPROBE_PYTHON"] = sys.executable
    return subprocess.run([str(CLI), "run", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


def script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def check_training_trace(trace, result):
    assert result.returncode == 0, result.stderr
    assert f"gpuprobe: wrote {trace}" in result.stderr
    events = load_events(trace)
    names = {e["name"] for e in events}
    # 3 batches, so 3 optimizer steps: the first begins step 0 (before it: imports, set-up and
    # the first iteration), the other two end steps 0 and 1.
    steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    assert [e["name"] for e in steps] == ["ProfilerStep#0", "ProfilerStep#1"], sorted(names)[:40]
    first_forward = min(e["ts"] for e in events if e["name"] == "ResNet")
    assert steps[0]["ts"] > first_forward
    assert "ResNet" in names and "ResNet.layer1" in names and "ResNet.fc" in names
    assert not any(n.startswith("ResNet.layer1.") for n in names)  # depth 2 by default
    assert any(n.startswith("gc gen") for n in names)
    assert any(n == "dataloader next" for n in names)
    assert re.search(r"steps 2", result.stderr), result.stderr


def test_unmodified_training_script_traced_and_unchanged(tmp_path):
    train = script(tmp_path, "train.py", TRAIN)
    plain = subprocess.run([sys.executable, str(train)], cwd=tmp_path, env=env_without_gpuprobe(),
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert plain.returncode == 0, plain.stderr
    assert "weights" in plain.stdout

    traced = python_run("-o", tmp_path / "py.json", "--", sys.executable, train, cwd=tmp_path)
    check_training_trace(tmp_path / "py.json", traced)
    assert traced.stdout == plain.stdout

    native = cli_run("-o", tmp_path / "cli.json", sys.executable, train, cwd=tmp_path)
    check_training_trace(tmp_path / "cli.json", native)
    assert native.stdout == plain.stdout


def test_default_output_has_the_pid(tmp_path):
    hello = script(tmp_path, "hello.py", "print('hi')\n")
    result = python_run(sys.executable, hello, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = list(tmp_path.glob("gpuprobe-*.json"))
    assert len(written) == 1 and re.fullmatch(r"gpuprobe-\d+\.json", written[0].name)


def test_parts_turn_off(tmp_path):
    train = script(tmp_path, "train.py", TRAIN)
    env = env_without_gpuprobe()
    env.update(GPUPROBE_RUN_MODULES="0", GPUPROBE_RUN_GC="0", GPUPROBE_RUN_DEPTH="1")
    result = python_run("-o", tmp_path / "t.json", sys.executable, train, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    names = {e["name"] for e in load_events(tmp_path / "t.json")}
    assert not any(n.startswith("ResNet") or n.startswith("gc gen") for n in names)
    assert any(n.startswith("ProfilerStep#") for n in names)


def test_module_depth_is_configurable(tmp_path):
    train = script(tmp_path, "train.py", TRAIN)
    env = env_without_gpuprobe()
    env["GPUPROBE_RUN_DEPTH"] = "3"
    result = cli_run("-o", tmp_path / "t.json", sys.executable, train, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    names = {e["name"] for e in load_events(tmp_path / "t.json")}
    assert "ResNet.layer1.0" in names and not any(n.startswith("ResNet.layer1.0.") for n in names)


def test_exit_status_passes_through(tmp_path):
    exit3 = script(tmp_path, "exit3.py", "import sys\nsys.exit(3)\n")
    killed = script(tmp_path, "killed.py",
                    "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    for run in (python_run, cli_run):
        assert run("-o", tmp_path / "a.json", sys.executable, exit3, cwd=tmp_path).returncode == 3
        assert run("-o", tmp_path / "b.json", sys.executable, killed,
                   cwd=tmp_path).returncode == 137


def test_missing_program_is_127(tmp_path):
    for run in (python_run, cli_run):
        result = run("--", "no-such-program-gpuprobe", cwd=tmp_path)
        assert result.returncode == 127
        assert "no-such-program-gpuprobe" in result.stderr


def test_bad_config_starts_nothing(tmp_path):
    marker = tmp_path / "started"
    child = script(tmp_path, "child.py", f"open({str(marker)!r}, 'w').close()\n")
    for run in (python_run, cli_run):
        result = run("-c", "no_such_key=1", sys.executable, child, cwd=tmp_path)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "no_such_key" in lines[0], result.stderr
        assert not marker.exists()


def test_existing_sitecustomize_still_runs(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "site-ran"
    script(site, "sitecustomize.py", f"open({str(marker)!r}, 'w').close()\n")
    hello = script(tmp_path, "hello.py", "import sys\nprint('sitecustomize' in sys.modules)\n")
    env = env_without_gpuprobe()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    result = python_run("-o", tmp_path / "t.json", sys.executable, hello, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert (tmp_path / "t.json").exists()


def test_compiled_program_compiles_as_without_gpuprobe(tmp_path):
    compiled = script(tmp_path, "compiled.py", """
        import torch
        from torch._dynamo.utils import counters
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
        run = torch.compile(model, backend="eager")
        x = torch.randn(2, 8)
        for _ in range(3):
            y = run(x)
        print(y.sum().item(), dict(counters["stats"]), dict(counters["graph_break"]))
    """)
    plain = subprocess.run([sys.executable, "-W", "error", str(compiled)], cwd=tmp_path,
                           env=env_without_gpuprobe(), capture_output=True, text=True,
                           timeout=TIMEOUT)
    assert plain.returncode == 0, plain.stderr
    traced = python_run("-o", tmp_path / "c.json", sys.executable, "-W", "error", compiled,
                        cwd=tmp_path)
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == plain.stdout  # same result, graphs, graph breaks
    names = {e["name"] for e in load_events(tmp_path / "c.json")}
    assert "torch.compile 0/0" in names and "Sequential" in names


NVTX_SCRIPT = """
    import torch
    torch.cuda.nvtx.range_push("epoch")
    for i in range(3):
        with torch.cuda.nvtx.range(f"step {i}"):
            torch.cuda.nvtx.mark("half way")
    torch.cuda.nvtx.range_pop()
    print("done")
"""


def test_nvtx_ranges_of_an_unmodified_script(tmp_path):
    """torch.cuda.nvtx (which needs no GPU) in a script that never imports gpuprobe: under
    `gpuprobe run` the process's gpuprobe is its NVTX tool, so the ranges are in the trace, nested
    on the calling thread; GPUPROBE_RUN_NVTX=0 leaves them out; another tool already named in
    NVTX_INJECTION64_PATH keeps NVTX, and gpuprobe says so."""
    nvtx = script(tmp_path, "nvtx_script.py", NVTX_SCRIPT)
    result = python_run("-o", tmp_path / "n.json", sys.executable, nvtx, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    events = load_events(tmp_path / "n.json")
    ranges = {}
    for e in events:
        if e.get("ph") == "X":
            ranges.setdefault(e["name"], []).append(e)
    if "epoch" not in ranges:
        import gpuprobe._core

        if not gpuprobe._core._nvtx_tool:
            import pytest

            pytest.skip("gpuprobe was built without the NVTX3 headers")
    (epoch,) = ranges["epoch"]
    for i in range(3):
        (step,) = ranges[f"step {i}"]
        assert step["tid"] == epoch["tid"]
        assert epoch["ts"] <= step["ts"] and step["ts"] + step["dur"] <= epoch["ts"] + epoch["dur"]
    assert sum(e.get("name") == "half way" and e.get("ph") in ("i", "I") for e in events) == 3

    env = env_without_gpuprobe()
    env["GPUPROBE_RUN_NVTX"] = "0"
    off = python_run("-o", tmp_path / "off.json", sys.executable, nvtx, cwd=tmp_path, env=env)
    assert off.returncode == 0, off.stderr
    assert "epoch" not in {e["name"] for e in load_events(tmp_path / "off.json")}

    env = env_without_gpuprobe()
    env["NVTX_INJECTION64_PATH"] = str(tmp_path / "libsome_other_tool.so")
    other = python_run("-o", tmp_path / "o.json", sys.executable, nvtx, cwd=tmp_path, env=env)
    assert other.returncode == 0 and other.stdout == "done\n", other.stderr
    assert "NVTX_INJECTION64_PATH names another tool" in other.stderr
    assert "epoch" not in {e["name"] for e in load_events(tmp_path / "o.json")}


def test_nvtx_of_a_python_program_and_of_its_native_child(tmp_path):
    """One library in NVTX_INJECTION64_PATH serves the whole tree under `gpuprobe run`: in the
    Python process it hands torch.cuda.nvtx's calls to the process's own session (gpuprobe._core:
    one file, gpuprobe's own NVTX export not fed back), and a native program that process starts
    (plain NVTX3, not linked with gpuprobe) records its ranges in a file of its own."""
    import json

    import pytest

    from gpuprobe.run import injection_library

    program = BUILD / "test" / "nvtx_program"
    if not program.exists():
        pytest.skip(f"no {program} (build the nvtx_program target)")
    if injection_library(os.environ) is None:
        pytest.skip("no libgpuprobe_nvtx.so installed beside the package")
    parent = script(tmp_path, "parent.py", f"""
        import subprocess
        import torch
        with torch.cuda.nvtx.range("parent epoch"):
            subprocess.run([{str(program)!r}], check=True)
        print("done")
    """)
    result = python_run("-o", tmp_path / "t-%p.json", sys.executable, parent, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    listed = re.findall(r"^gpuprobe: wrote (.+)$", result.stderr, re.MULTILINE)
    assert len(listed) == 2, result.stderr
    traces = {path: json.loads(pathlib.Path(path).read_text()) for path in listed}
    names = {path: {e["name"] for e in t["traceEvents"] if e.get("ph") == "X"}
             for path, t in traces.items()}
    (mine,) = [p for p in listed if "parent epoch" in names[p]]
    (child,) = [p for p in listed if "outer" in names[p]]
    assert mine != child
    assert "outer" not in names[mine] and "parent epoch" not in names[child]
    assert {"inner", "mylib: registered step"} <= names[child], sorted(names[child])
    assert traces[mine]["gpuprobe"]["nvtx"] is False  # its own NVTX export declined


def test_spawned_children_write_files_of_their_own(tmp_path):
    """multiprocessing's spawned workers (as torchrun's ranks and spawn-context DataLoader
    workers) are Python processes of their own: each starts its session from the same
    GPUPROBE, writes its own %p file, and the runner lists every file written."""
    pool = script(tmp_path, "pool.py", """
        import multiprocessing as mp
        import os

        def work(n):
            return sum(i * i for i in range(n)), os.getpid()

        if __name__ == "__main__":
            p = mp.get_context("spawn").Pool(2)
            results = p.map(work, [20000] * 8)
            p.close()
            p.join()  # the workers end (and write) before the program does
            print(sorted({r[0] for r in results}), len({r[1] for r in results}) >= 1)
    """)
    plain = subprocess.run([sys.executable, str(pool)], cwd=tmp_path, env=env_without_gpuprobe(),
                           capture_output=True, text=True, timeout=TIMEOUT)
    traced = python_run("-o", tmp_path / "t-%p.json", sys.executable, pool, cwd=tmp_path)
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == plain.stdout
    # The parent and its two workers, which ended before it; a process that outlives the program
    # (multiprocessing's resource tracker) may write its file after the runner has listed them.
    listed = re.findall(r"^gpuprobe: wrote (.+)$", traced.stderr, re.MULTILINE)
    assert len(listed) >= 3, traced.stderr
    for path in listed:
        load_events(path)  # each a whole trace
