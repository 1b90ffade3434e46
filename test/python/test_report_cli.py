"""`gpuprobe diff A B` and `gpuprobe report DIR` (several ranks, stragglers flagged)."""
import json
import os
import pathlib
import subprocess

from pytest import approx

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))


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


def test_diff_names_what_changed(tmp_path):
    synthetic(tmp_path / "a.json", 0, 30)
    synthetic(tmp_path / "b.json", 0, 45)
    rows = {(r["kind"], r["name"]): r for r in cli_json("diff", tmp_path / "a.json", tmp_path / "b.json")["rows"]}
    step = rows[("range", "ProfilerStep")]
    assert step["total_a_ms"] == approx(1.8) and step["total_b_ms"] == approx(2.7)
    assert rows[("kernel", "gemm_kernel")]["delta_ms"] == 0
