"""torch-tb-profiler (PyPI, TensorBoard's PyTorch profiler plugin) finds a trace written in
torch.profiler's directory layout (`chrome=DIR/`, gzipped with `DIR/+gz`) and builds its views:
steps, kernel table and GPU time per step."""
import os
import pathlib
import subprocess

import pytest

from torch_tb_profiler import consts
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.run_generator import RunGenerator

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))


@pytest.mark.parametrize("suffix", ["", "+gz"])
def test_torch_tb_profiler_loads_our_layout(tmp_path, suffix):
    run_dir = tmp_path / "run"
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"chrome={run_dir}/{suffix}"],
                   check=True)
    files = [p.name for p in run_dir.iterdir()]
    assert len(files) == 1
    assert files[0].endswith(".pt.trace.json" + (".gz" if suffix else ""))
    match = consts.WORKER_PATTERN.match(files[0])
    assert match, files[0]
    worker = match.group(1)
    data = RunProfileData.parse(worker, None, str(run_dir / files[0]), str(tmp_path / "cache"))
    assert data.has_kernel
    assert data.steps_names == ["0", "1", "2"]
    profile = RunGenerator(worker, None, data).generate_run_profile()
    rows = {r[0]: r for r in profile.kernel_table["data"]["rows"]}
    assert rows["gemm_kernel"][2:4] == [30, 600]  # calls, total us
    assert rows["relu_kernel"][2:4] == [30, 90]
    for step in profile.overview["steps"]["rows"]:
        assert step[1] == 230.0  # kernel us per step
