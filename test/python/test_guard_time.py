"""What torch.compile costs on every call after its compiles (issue 44, part 1): gpuprobe.torch's
"dynamo guards: [frame] function" range per compiled call — torch.compile's wrapper turning
Dynamo on to the call's first forward graph — against torch.profiler's own "TorchDynamo Cache
Lookup" (the guards alone) recorded in the same calls, the metrics histogram per frame and the
report's guards section, with PyPI's torch on the CPU. The compiled program is unchanged: the
same result and the same graphs with and without the ranges."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"

# A frame whose guards were planted to be expensive (a guard per tensor of a 1000-long list, and
# the list's length) and a cheap one, each called 20 times under both gpuprobe and torch.profiler
# after their compiles and first runs.
PROGRAM = textwrap.dedent("""
    import json, sys, torch, gpuprobe, gpuprobe.torch as gt
    from torch.profiler import profile, ProfilerActivity
    out, guards = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    def planted(xs):
        return sum(x.sum() for x in xs)
    def cheap(x):
        return x * 2 + 1
    compiled, small = torch.compile(planted), torch.compile(cheap)
    xs = [torch.randn(4) for _ in range(1000)]
    watcher = gt.watch_compile(**json.loads(guards)) if guards != "off" else None
    results = []
    with gpuprobe.Session(f"chrome={out}/t.json,metrics_file={out}/m.prom"):
        for _ in range(2):  # the compiles, and each graph's first run
            compiled(xs); small(xs[0])
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(20):
                with gpuprobe.range("request"):
                    results.append(compiled(xs)); results.append(small(xs[0]))
        prof.export_chrome_trace(f"{out}/kineto.json")
    if watcher is not None:
        watcher.close()
    counters = torch._dynamo.utils.counters
    print(json.dumps({"results": [float(r.sum()).hex() for r in results],
                      "graphs": counters["stats"]["unique_graphs"],
                      "frames": counters["frames"]["ok"]}))
""")


def run(tmp_path, guards):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    out = tmp_path / str(abs(hash(guards)))
    out.mkdir()
    result = subprocess.run([sys.executable, str(script), str(out), guards], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, json.loads(result.stdout.strip().splitlines()[-1])


def events(path):
    data = json.loads(pathlib.Path(path).read_text())
    return data["traceEvents"] if isinstance(data, dict) else data


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("guards")
    return {mode: run(tmp, mode) for mode in ("{}", "off", '{"guards": false}')}


def test_one_range_per_compiled_call_containing_torchs_own_cache_lookup(recorded):
    out, _ = recorded["{}"]
    ours = [e for e in events(out / "t.json") if e.get("name", "").startswith("dynamo guards: ")]
    names = {e["name"] for e in ours}
    assert names == {"dynamo guards: [0] planted", "dynamo guards: [1] cheap"}, names
    planted = sorted((e for e in ours if e["name"].endswith("planted")), key=lambda e: e["ts"])
    cheap = sorted((e for e in ours if e["name"].endswith("cheap")), key=lambda e: e["ts"])
    # Every call after the graph's first run (which follows its compile, and is left out): the
    # second warm-up call and the 20 profiled ones.
    assert len(planted) == len(cheap) == 21
    assert all(e.get("cat") == "compile" for e in ours)
    # torch.profiler's RecordFunction around Dynamo's cache lookup, in the same calls, in order:
    # the lookup happens inside the span gpuprobe records, so each of ours lasts at least as long
    # (the profiler's and gpuprobe's clocks each round to a microsecond or less).
    lookups = sorted((e for e in events(out / "kineto.json")
                      if e.get("name") == "TorchDynamo Cache Lookup"), key=lambda e: e["ts"])
    assert len(lookups) == 40  # planted, cheap, planted, ...
    for i, (p, c) in enumerate(zip(planted[1:], cheap[1:])):
        for mine, torchs in ((p, lookups[2 * i]), (c, lookups[2 * i + 1])):
            assert mine["dur"] >= torchs["dur"] - 2, (mine, torchs)


def test_metrics_and_report_count_every_call(recorded):
    out, _ = recorded["{}"]
    prom = (out / "m.prom").read_text()
    assert 'gpuprobe_compile_guard_seconds_count{frame="[0] planted"} 21' in prom, prom[-2000:]
    assert 'gpuprobe_compile_guard_seconds_count{frame="[1] cheap"} 21' in prom
    report = json.loads(subprocess.run([str(CLI), "report", str(out / "t.json"), "--json"],
                                       check=True, capture_output=True, text=True).stdout)
    guards = report["guards"]
    assert guards["calls"] == 42
    assert [f["frame"] for f in guards["frames"]] == ["[0] planted", "[1] cheap"]
    assert guards["requests"] == "request" and guards["request_count"] == 20
    mine = [e["dur"] for e in events(out / "t.json") if e.get("name", "").startswith("dynamo guards")]
    assert guards["total_ms"] == pytest.approx(sum(mine) / 1e3, rel=1e-3)
    assert 0 < guards["share_of_requests"] < 1
    assert report["compile"]["compiles"] == 2  # the guards are no compile
    text = subprocess.run([str(CLI), "report", str(out / "t.json")], check=True,
                          capture_output=True, text=True).stdout
    assert "compiled calls' guards: 42 calls" in text, text


def test_torch_profiler_traces_cache_lookups_are_read_too(recorded):
    out, _ = recorded["{}"]
    report = json.loads(subprocess.run([str(CLI), "report", str(out / "kineto.json"), "--json"],
                                       check=True, capture_output=True, text=True).stdout)
    assert report["guards"]["calls"] == 40
    assert [f["frame"] for f in report["guards"]["frames"]] == ["(cache lookup)"]


def test_compiles_and_results_unchanged(recorded):
    _, with_guards = recorded["{}"]
    _, without = recorded["off"]
    assert with_guards == without  # bit-identical results, the same graphs and frames


def test_guards_off_records_none(recorded):
    out, _ = recorded['{"guards": false}']
    assert not [e for e in events(out / "t.json") if e.get("name", "").startswith("dynamo guards")]
    assert "gpuprobe_compile_guard_seconds" not in (out / "m.prom").read_text()


# Sessions one after another in one process, the compiled graphs remembered across them: a
# session's name table frees the names the next one does not intern again, so each session's
# guards names are its own (once, a third session recorded a freed name).
SESSIONS = textwrap.dedent("""
    import sys, torch, gpuprobe, gpuprobe.torch as gt
    out = sys.argv[1]
    f = torch.compile(lambda x: x * 2 + 1)
    x = torch.ones(8)
    watcher = gt.watch_compile(cache_keys=False)
    f(x); f(x)
    for n in range(4):
        with gpuprobe.Session(f"chrome={out}/s{n}.json"):
            for _ in range(0 if n == 1 else 5):
                f(x)
    watcher.close()
""")


def test_sessions_one_after_another_keep_their_names(tmp_path):
    script = tmp_path / "sessions.py"
    script.write_text(SESSIONS)
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    for n, calls in ((0, 5), (1, 0), (2, 5), (3, 5)):
        names = [e["name"] for e in events(tmp_path / f"s{n}.json")
                 if e.get("name", "").startswith("dynamo guards")]
        assert names == ["dynamo guards: [0] <lambda>"] * calls, (n, names)
