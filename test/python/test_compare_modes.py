"""`gpuprobe.torch.compare_modes(fn, *inputs)`: the seed's question "default, reduce-overhead or
max-autotune?" on the CPU. A function with a planted graph break, compiled under every mode: each
row's compiles and graph breaks are the plant's, its numerics against eager are what the test
computes from the mode's compiled function itself, T_compile is the bulk of T_first (the first
call's time on the program's clock less one run) and never more, the times agree (within 2x)
with the test's own interleaved timing of the same compiled functions, and the report's compile
section carries the same table. A mode torch does not know is reported as failed, with the rest
compared."""
import json
import math
import os
import pathlib
import subprocess
import time

import pytest

import gpuprobe

torch = pytest.importorskip("torch")
import gpuprobe.torch as gt  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"
W = torch.randn(128, 128, generator=torch.Generator().manual_seed(0))


def planted(x):
    y = torch.nn.functional.gelu(x @ W) * 2
    print(end="")  # a graph break: two graphs per mode
    return torch.tanh(y).sum(dim=1) + 1


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("modes")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(tmp / "inductor"))
    torch._dynamo.reset()
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(1))
    trace = tmp / "trace.json"
    with gpuprobe.Session(f"chrome={trace}"):
        result = gt.compare_modes(planted, x)
    yield result, x, trace
    torch._dynamo.reset()


def test_every_mode_is_compiled_and_compared(compared):
    result, x, _ = compared
    assert [m.mode for m in result.modes] == ["default", "reduce-overhead", "max-autotune"]
    eager = planted(x)
    for m in result.modes:
        assert m.error is None, m
        assert (m.compiles, m.graph_breaks) == (2, 1), m  # the plant
        # Numerics: the mode's own compiled function against eager, computed here.
        error = float((m.compiled(x).double() - eager.double()).abs().max())
        assert m.max_abs_error == pytest.approx(error, rel=1e-6, abs=1e-12)
        assert m.passed
        # T_compile is the bulk of T_first, the first call less what a call costs, and never
        # more: the rest is the first call's work outside Dynamo's compiles (the graphs' first
        # runs, Dynamo's recording of its metrics after a compile's span): 5 ms on the
        # development VM, 20-80 ms on the 16-core H200 host (0.145 s of 0.184 s there, with both
        # compiles served from Inductor's cache; a fixed 20 % failed on that host).
        assert m.first_call_extra_seconds == pytest.approx(m.first_call_seconds - m.execute_seconds)
        assert 0 < m.compile_seconds <= m.first_call_seconds
        assert 0.5 * m.first_call_extra_seconds <= m.compile_seconds
        assert m.speedup == pytest.approx(result.eager_seconds / m.execute_seconds)
        gain = result.eager_seconds - m.execute_seconds
        assert m.break_even_calls == (m.compile_seconds / gain if gain > 0 else math.inf)
    assert result.fastest in ["eager"] + [m.mode for m in result.modes]
    table = result.table()
    assert table.splitlines()[0].split()[:4] == ["mode", "T_compile", "T_first", "T_execute"]
    assert all(m.mode in table for m in result.modes)


# Calls per sample in the test's own timing: with 5, a fresh clone's run on the busy 2-core VM
# once timed reduce-overhead at 2.5x compare_modes' figure (which takes ~10 ms per sample).
CALLS = 40


@pytest.mark.skipif(os.environ.get("GPUPROBE_TIMING_TESTS") != "1",
                    reason="a timing cross-check (two timings taken seconds apart disagree under a "
                    "load that comes and goes: issue 40 item 8): a benchmark's job, run with "
                    "GPUPROBE_TIMING_TESTS=1 (test/gpu/run.sh sets it)")
def test_execute_time_agrees_with_the_tests_own_timing(compared):
    result, x, _ = compared
    arms = [("eager", planted)] + [(m.mode, m.compiled) for m in result.modes]

    def own_medians():
        samples = {name: [] for name, _ in arms}
        with torch.no_grad():
            for r in range(11):
                for name, f in arms[r % len(arms):] + arms[:r % len(arms)]:
                    begin = time.perf_counter()
                    for _ in range(CALLS):
                        f(x)
                    samples[name].append((time.perf_counter() - begin) / CALLS)
        return {name: sorted(s)[len(s) // 2] for name, s in samples.items()}

    def disagreements(median):
        pairs = [(f"{m.mode} speedup", m.speedup, median["eager"] / median[m.mode])
                 for m in result.modes]
        pairs += [(f"{m.mode} T_execute", m.execute_seconds, median[m.mode]) for m in result.modes]
        pairs.append(("eager T_execute", result.eager_seconds, median["eager"]))
        return [f"{what}: {theirs:.3g} against {ours:.3g}" for what, theirs, ours in pairs
                if not 0.5 < theirs / ours < 2]

    # Within 2x: two timings of sub-100 us CPU calls taken seconds apart, on shared machines
    # (the 2-core CI VM; the 16-core GPU host, where Inductor's compile workers were still
    # winding down, gave S 0.66 against 0.97 measured here a moment later). What this catches is
    # a wrong arm or a wrong division, which every attempt shows, not noise: a load that comes
    # and goes between the two timings (a fresh clone's run once saw T_execute at 0.47x of the
    # test's own while another process shared the VM's two cores) passes on a later attempt.
    attempts = [disagreements(own_medians())]
    while attempts[-1] and len(attempts) < 3:
        attempts.append(disagreements(own_medians()))
    assert not attempts[-1], attempts


def test_the_report_shows_the_table(compared):
    result, _, trace = compared
    modes = json.loads(subprocess.run([str(CLI), "report", "--json", str(trace)],
                                      capture_output=True, text=True, check=True).stdout)["compile"]["modes"]
    assert [m["mode"] for m in modes] == [m.mode for m in result.modes]
    for row, m in zip(modes, result.modes):
        assert row["compile_seconds"] == pytest.approx(m.compile_seconds)
        assert row["execute_ms"] == pytest.approx(m.execute_seconds * 1e3)
        assert row["speedup"] == pytest.approx(m.speedup)
        assert row["break_even_calls"] == (None if math.isinf(m.break_even_calls)
                                           else pytest.approx(m.break_even_calls))
        assert row["max_abs_error"] == pytest.approx(m.max_abs_error)
        assert (row["passed"], row["graph_breaks"], row["compiles"]) == (True, 1, 2)
    text = subprocess.run([str(CLI), "report", str(trace)], capture_output=True, text=True,
                          check=True).stdout
    assert "modes (compare_modes)" in text and "max-autotune" in text


def test_a_mode_that_fails_is_reported_and_the_others_compared():
    x = torch.randn(8, 128)
    result = gt.compare_modes(planted, x, modes=("no-such-mode", "default"), rounds=2)
    failed, ok = result.modes
    assert failed.error is not None and "no-such-mode" in failed.error
    assert math.isnan(failed.execute_seconds)
    assert ok.error is None and ok.execute_seconds > 0
    assert "failed:" in result.table()
