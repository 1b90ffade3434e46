"""`gpuprobe diff A B` and `gpuprobe report DIR` (several ranks, stragglers flagged), on synthetic
traces and on a real two-process torch.distributed job (gloo, on the CPU)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest
from pytest import approx

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
HERE = pathlib.Path(__file__).resolve().parent


def cli_json(*args):
    out = subprocess.run([str(BUILD / "gpuprobe"), *map(str, args), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def synthetic(path, rank, spacing_us):
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"chrome={path}", str(rank),
                    str(spacing_us)], check=True)


def test_ranks_and_stragglers(tmp_path):
    for rank in range(4):
        synthetic(tmp_path / f"rank{rank}.json", rank, 45 if rank == 2 else 30)
    ranks = cli_json("report", tmp_path)["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1, 2, 3]
    assert [r["straggler"] for r in ranks] == [False, False, True, False]
    assert ranks[2]["mean_step_ms"] == approx(0.9) and ranks[0]["mean_step_ms"] == approx(0.6)


def test_steps_window_applies_to_each_trace_of_a_directory(tmp_path):
    # The window is found per trace, after the command knows it was given a directory.
    for rank in range(3):
        synthetic(tmp_path / f"rank{rank}.json", rank, 45 if rank == 2 else 30)
    ranks = cli_json("report", tmp_path, "--steps", "1-2")["ranks"]
    assert [r["steps"] for r in ranks] == [2, 2, 2]
    assert [r["straggler"] for r in ranks] == [False, False, True]
    assert ranks[2]["duration_ms"] == approx(1.8) and ranks[0]["duration_ms"] == approx(1.2)


def test_diff_names_what_changed(tmp_path):
    synthetic(tmp_path / "a.json", 0, 30)
    synthetic(tmp_path / "b.json", 0, 45)
    rows = {(r["kind"], r["name"]): r for r in cli_json("diff", tmp_path / "a.json", tmp_path / "b.json")["rows"]}
    step = rows[("range", "ProfilerStep")]
    assert step["total_a_ms"] == approx(1.8) and step["total_b_ms"] == approx(2.7)
    assert rows[("kernel", "gemm_kernel")]["delta_ms"] == 0


def _two_ranks(tmp_path, recorder):
    torch = pytest.importorskip("torch")
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("skipped: this torch has no gloo backend")
    out = tmp_path / recorder
    subprocess.run([sys.executable, str(HERE / "dist_workload.py"), str(out), "--backend", "gloo",
                    "--world", "2", "--slow-rank", "1", "--steps", "8", "--recorder", recorder],
                   check=True, capture_output=True, timeout=300)
    return out


@pytest.mark.parametrize("recorder", ["torch", "gpuprobe"])
def test_a_real_two_rank_job_names_its_straggler(tmp_path, recorder):
    # Two processes all-reduce their gradients every step (gloo); rank 1 computes four times as
    # much, so rank 0 waits for it inside the all-reduce. Both ranks' steps take about as long:
    # the straggler is the one with the most time outside collectives.
    out = _two_ranks(tmp_path, recorder)
    ranks = cli_json("report", out)["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert [r["steps"] for r in ranks] == [8, 8]
    assert [r["straggler"] for r in ranks] == [False, True]
    assert ranks[0]["collective_ms"] > ranks[1]["collective_ms"] > 0
    assert ranks[1]["work_ms"] > 1.1 * ranks[0]["work_ms"]
    assert "outside collectives" in ranks[1]["why"] or "step" in ranks[1]["why"]
    # What most of the extra time is: the work done four times over (gpuprobe's range around it;
    # in torch.profiler's trace one of the operators it runs), above the other rank's. Four
    # times the work, but not asserted as a ratio of times: two ranks on a loaded 2-core CI
    # machine slow each other unevenly (a fresh-clone run saw 62.5 against 34.1 ms a step).
    excess = ranks[1]["excess"]
    assert excess is not None and ranks[0]["excess"] is None
    assert excess["ms_per_step"] > excess["others_ms_per_step"], excess
    if recorder == "gpuprobe":
        assert (excess["kind"], excess["name"]) == ("range", "forward+backward")
    assert f"most of it: {excess['kind']} {excess['name']}" in ranks[1]["why"]
    if recorder == "gpuprobe":
        # Each rank's production metrics carry its rank as a label, on every sample.
        for rank in (0, 1):
            samples = [line for line in (out / f"rank{rank}.prom").read_text().splitlines()
                       if line and not line.startswith("#")]
            assert samples and all(f'rank="{rank}"' in line for line in samples), samples[:3]
            assert 'gpuprobe_step_duration_seconds_count{rank="%d"} 8' % rank in samples


def test_json_report_has_kernel_classes_and_self_times(tmp_path):
    synthetic(tmp_path / "t.json", 0, 30)
    report = cli_json("report", tmp_path / "t.json")
    classes = {k["name"]: k["class"] for k in report["kernels"]}
    assert classes == {"gemm_kernel": "compute", "relu_kernel": ""}
    gpu = report["gpu"]
    assert gpu["kernel_class_ms"]["compute"] == approx(sum(
        k["total_ms"] for k in report["kernels"] if k["class"] == "compute"))
    assert sum(gpu["kernel_class_ms"].values()) == approx(gpu["kernel_ms"])
    ranges = {r["name"]: r for r in report["ranges"]}
    # The step holds the forward: its self time is the part outside it.
    step, forward = ranges["ProfilerStep"], ranges["forward"]
    assert step["self_ms"] == approx(step["total_ms"] - forward["total_ms"], abs=1e-6)
